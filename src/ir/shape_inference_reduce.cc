// Shape rules of reductions and sorting: reduce, reduce-window, select-and-scatter, sort, topk.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The N inputs and N init values of a variadic reduce or reduce-window: 2N operands, inputs of
// equal dims, init i a scalar. Returns N.
Result<int64_t> CheckInputsAndInits(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  if (instruction.operand_count() % 2 != 0) {
    return RuleError(instruction, "expects N inputs then N init values but has {} operands",
                     instruction.operand_count());
  }
  const int64_t n = instruction.operand_count() / 2;
  const Shape& first = OperandShape(instruction, 0);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = OperandShape(instruction, i);
    const Shape& init = OperandShape(instruction, n + i);
    if (input.dims() != first.dims()) {
      return RuleError(instruction, "inputs must have equal dimensions but have shapes {} and {}",
                       Str(first), Str(input));
    }
    if (init.rank() != 0) {
      return RuleError(instruction, "init value {} {} must be a scalar", i, Str(init));
    }
  }
  return n;
}

// Accumulator types are the init values' (operands N..2N-1), input types the inputs'.
Status CheckVariadicReducer(const Instruction& instruction, int64_t n) {
  std::vector<DType> accumulators;
  std::vector<DType> inputs;
  for (int64_t i = 0; i < n; ++i) {
    inputs.push_back(OperandShape(instruction, i).dtype());
    accumulators.push_back(OperandShape(instruction, n + i).dtype());
  }
  return CheckReducer(instruction, 0, accumulators, inputs);
}

// Result i has dims `dims` and the element type of init value i.
Shape ReduceResult(const Instruction& instruction, int64_t n, const std::vector<int64_t>& dims) {
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    results.push_back(Shape::Array(OperandShape(instruction, n + i).dtype(), dims));
  }
  return ArrayOrTuple(std::move(results));
}

}  // namespace

// reduce(inputs..., inits...), dimensions={...}: the reduced dims removed; a tuple when N > 1.
Result<Shape> InferReduceShape(const Instruction& instruction) {
  ALPA_ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(instruction));
  const Shape& input = OperandShape(instruction, 0);
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, input.rank()));
  ALPA_RETURN_IF_ERROR(CheckVariadicReducer(instruction, n));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!Contains(dimensions, d)) dims.push_back(input.dim(d));
  }
  return ReduceResult(instruction, n, dims);
}

// reduce-window: each dimension windowed as in WindowOutputDims (base dilation = lhs_dilate).
Result<Shape> InferReduceWindowShape(const Instruction& instruction) {
  ALPA_ASSIGN_OR_RETURN(int64_t n, CheckInputsAndInits(instruction));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                        WindowOutputDims(instruction, OperandShape(instruction, 0).dims()));
  ALPA_RETURN_IF_ERROR(CheckVariadicReducer(instruction, n));
  return ReduceResult(instruction, n, dims);
}

// select-and-scatter(operand, source, init): source has the shape reduce-window with this window
// gives the operand; select is (T, T) -> pred[], scatter (T, T) -> T; the result is the
// operand's shape.
Result<Shape> InferSelectAndScatterShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 3));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 2));
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& source = OperandShape(instruction, 1);
  const Shape& init = OperandShape(instruction, 2);
  if (init.rank() != 0 || init.dtype() != operand.dtype()) {
    return RuleError(instruction, "init value {} must be a scalar of the operand's type",
                     Str(init));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> windowed,
                        WindowOutputDims(instruction, operand.dims()));
  if (source.dims() != windowed || source.dtype() != operand.dtype()) {
    return RuleError(instruction, "source {} must have shape {} (the operand {} windowed)",
                     Str(source), Str(Shape::Array(operand.dtype(), windowed)), Str(operand));
  }
  const ProgramShape select = CalleeSignature(instruction, 0);
  const Shape scalar = Shape::Scalar(operand.dtype());
  if (select.parameters.size() != 2 || !select.parameters[0].Compatible(scalar) ||
      !select.parameters[1].Compatible(scalar) ||
      !select.result.Compatible(Shape::Scalar(DType::kPred))) {
    return RuleError(instruction, "select %{} has signature {} but must be ({}, {})->pred[]",
                     instruction.called_computation(0)->name(), select.ToString(false), Str(scalar),
                     Str(scalar));
  }
  ALPA_RETURN_IF_ERROR(CheckReducer(instruction, 1, {operand.dtype()}, {source.dtype()}));
  return operand;
}

// sort(operands...), dimensions={d}: comparator (T0, T0, T1, T1, ...) -> pred[].
Result<Shape> InferSortShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  const Shape& first = OperandShape(instruction, 0);
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, first.rank()));
  std::vector<Shape> results;
  std::vector<Shape> expected_parameters;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (operand.dims() != first.dims()) {
      return RuleError(instruction, "operands must have equal dimensions but have shapes {} and {}",
                       Str(first), Str(operand));
    }
    results.push_back(operand);
    expected_parameters.insert(expected_parameters.end(), 2, Shape::Scalar(operand.dtype()));
  }
  const ProgramShape comparator = CalleeSignature(instruction, 0);
  const ProgramShape expected{expected_parameters, Shape::Scalar(DType::kPred)};
  bool ok = comparator.parameters.size() == expected_parameters.size() &&
            comparator.result.Compatible(expected.result);
  for (size_t i = 0; ok && i < expected_parameters.size(); ++i) {
    ok = comparator.parameters[i].Compatible(expected_parameters[i]);
  }
  if (!ok) {
    return RuleError(instruction, "comparator %{} has signature {} but must be {}",
                     instruction.to_apply()->name(), comparator.ToString(false),
                     expected.ToString(false));
  }
  return ArrayOrTuple(std::move(results));
}

// topk(operand), k=K: (T[..., K], s32[..., K]) along the last dimension.
Result<Shape> InferTopKShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const int64_t k = instruction.attributes().k;
  if (operand.rank() == 0 || k < 0 || k > operand.dims().back()) {
    return RuleError(instruction, "k={} must lie in [0, last dimension] of operand {}", k,
                     Str(operand));
  }
  std::vector<int64_t> dims = operand.dims();
  dims.back() = k;
  return Shape::Tuple({Shape::Array(operand.dtype(), dims), Shape::Array(DType::kS32, dims)});
}

}  // namespace alpa::ir::shape_inference_internal
