// Shape rules of cross-device collectives and their async -start/-done halves, as XLA shapes
// them:
//   all-reduce, collective-broadcast: the operands' shapes (a tuple when several).
//   all-gather: dimension d grows G times;  reduce-scatter: dimension d shrinks G times, where G
//     is the replica group size (see shape_inference.h for empty replica_groups). In a variadic
//     one, a scalar operand passes through unchanged: PyTorch/XLA appends its ordering token as
//     a scalar operand to every all-gather and reduce-scatter it emits.
//   all-to-all: with dimensions={split}, the operand's shape (split divisible by G); without, the
//     tuple of the operands' shapes.
//   collective-permute: the operand's shape.
//   all-reduce-start: as all-reduce; all-gather-start: (operand, result); -done: the result.
//   collective-permute-start: XLA adds context scalars, so its declared tuple is accepted when
//     its first two elements are the operand's shape.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The replica group size, or 0 when replica_groups is empty or absent (unknown).
int64_t GroupSize(const Instruction& instruction) {
  const std::optional<ReplicaGroups>& groups = instruction.attributes().replica_groups;
  if (!groups.has_value() || groups->groups.empty()) return 0;
  return static_cast<int64_t>(groups->groups[0].size());
}

// The declared array shape for result `i` of N, when it is one.
const Shape* DeclaredResult(const Shape& declared, int64_t i, int64_t n) {
  if (n == 1) return declared.IsArray() ? &declared : nullptr;
  if (!declared.IsTuple() || declared.tuple_size() != n) return nullptr;
  return declared.tuple_shape(i).IsArray() ? &declared.tuple_shape(i) : nullptr;
}

// all-gather (grow) and reduce-scatter (!grow) along dimensions={d} on every operand.
// `declared` is the declared result (array, or tuple of N arrays).
Result<Shape> InferGatherScatter(const Instruction& instruction, const Shape& declared_result,
                                 bool grow) {
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  const int64_t d = dimensions[0];
  const int64_t group_size = GroupSize(instruction);
  const int64_t n = instruction.operand_count();
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (n > 1 && operand.rank() == 0) {
      results.push_back(operand);
      continue;
    }
    ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, operand.rank()));
    const int64_t size = operand.dim(d);
    std::vector<int64_t> dims = operand.dims();
    if (group_size > 0) {
      if (!grow && size % group_size != 0) {
        return RuleError(instruction,
                         "dimension {} of operand {} has size {}, not divisible by the replica "
                         "group size {}",
                         d, i, size, group_size);
      }
      dims[static_cast<size_t>(d)] = grow ? size * group_size : size / group_size;
    } else {
      // Participant count unknown: accept the declared size when the ratio is whole.
      const Shape* declared = DeclaredResult(declared_result, i, n);
      const int64_t out =
          declared != nullptr && declared->rank() == operand.rank() ? declared->dim(d) : -1;
      const int64_t big = grow ? out : size;
      const int64_t small = grow ? size : out;
      const bool whole = out >= 0 && (small == 0 ? big == 0 : big % small == 0);
      if (!whole) {
        return RuleError(instruction,
                         "without replica_groups the declared dimension {} must be a {} of the "
                         "operand's size {}",
                         d, grow ? "multiple" : "divisor", size);
      }
      dims[static_cast<size_t>(d)] = out;
    }
    results.push_back(Shape::Array(operand.dtype(), std::move(dims)));
  }
  return ArrayOrTuple(std::move(results));
}

Result<Shape> InferAllReduce(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  const DType dtype = OperandShape(instruction, 0).dtype();
  ALPA_RETURN_IF_ERROR(CheckReducer(instruction, 0, {dtype}, {dtype}));
  return ArrayOrTuple(AllOperandShapes(instruction));
}

Result<Shape> InferAllToAll(const Instruction& instruction) {
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  std::vector<Shape> shapes = AllOperandShapes(instruction);
  if (dimensions.empty()) return Shape::Tuple(std::move(shapes));
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& operand = shapes[0];
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, operand.rank()));
  const int64_t group_size = GroupSize(instruction);
  if (group_size > 0 && operand.dim(dimensions[0]) % group_size != 0) {
    return RuleError(instruction,
                     "split dimension {} has size {}, not divisible by the replica group size {}",
                     dimensions[0], operand.dim(dimensions[0]), group_size);
  }
  return operand;
}

// The -done half: element `index` of the -start tuple.
Result<Shape> InferDone(const Instruction& instruction, int64_t index) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& start = OperandShape(instruction, 0);
  if (!start.IsTuple() || start.tuple_size() <= index) {
    return RuleError(instruction, "operand must be the tuple of a -start op but has shape {}",
                     Str(start));
  }
  return start.tuple_shape(index);
}

Result<Shape> InferCollectivePermuteStart(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& declared = instruction.shape();
  if (declared.IsTuple() && declared.tuple_size() >= 2 &&
      declared.tuple_shape(0).Compatible(operand) && declared.tuple_shape(1).Compatible(operand)) {
    return declared;
  }
  return RuleError(instruction, "declared shape {} must be a tuple starting with ({}, {})",
                   Str(declared), Str(operand), Str(operand));
}

}  // namespace

Result<Shape> InferCollectiveShape(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kAllReduceDone) {
    ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
    return OperandShape(instruction, 0);
  }
  if (opcode == Opcode::kAllGatherDone || opcode == Opcode::kCollectivePermuteDone) {
    return InferDone(instruction, 1);
  }
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 1));
  switch (opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
      return InferAllReduce(instruction);
    case Opcode::kReduceScatter:
      ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
      ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      ALPA_RETURN_IF_ERROR(CheckReducer(instruction, 0, {OperandShape(instruction, 0).dtype()},
                                        {OperandShape(instruction, 0).dtype()}));
      return InferGatherScatter(instruction, instruction.shape(), /*grow=*/false);
    case Opcode::kAllGather:
      ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
      return InferGatherScatter(instruction, instruction.shape(), /*grow=*/true);
    case Opcode::kAllGatherStart: {
      ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
      // The declared start tuple holds the gathered shape(s) at index 1.
      const Shape& declared = instruction.shape();
      const Shape declared_result =
          declared.IsTuple() && declared.tuple_size() == 2 ? declared.tuple_shape(1) : Shape();
      ALPA_ASSIGN_OR_RETURN(Shape gathered,
                            InferGatherScatter(instruction, declared_result, /*grow=*/true));
      return Shape::Tuple({ArrayOrTuple(AllOperandShapes(instruction)), std::move(gathered)});
    }
    case Opcode::kAllToAll:
      ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
      return InferAllToAll(instruction);
    case Opcode::kCollectivePermute:
      if (instruction.operand_count() == 1) return OperandShape(instruction, 0);
      return instruction.shape();  // the in-place form with buffers and offsets
    case Opcode::kCollectivePermuteStart:
      return InferCollectivePermuteStart(instruction);
    default:  // collective-broadcast
      return ArrayOrTuple(AllOperandShapes(instruction));
  }
}

}  // namespace alpa::ir::shape_inference_internal
