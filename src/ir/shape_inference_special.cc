// Shape rules of the remaining ops with a rule: random numbers, batch normalization, linear
// algebra, tokens and async copies.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// Operands `first`..`last` are arrays of exactly `shape`.
Status CheckOperandsAre(const Instruction& instruction, int64_t first, int64_t last,
                        const Shape& shape, std::string_view what) {
  for (int64_t i = first; i <= last; ++i) {
    if (!OperandShape(instruction, i).Compatible(shape)) {
      return RuleError(instruction, "operand {} {} must be {} {}", i,
                       Str(OperandShape(instruction, i)), what, Str(shape));
    }
  }
  return Status::Ok();
}

// triangular-solve keeps `left_side=` as an opaque attribute; absent means false.
bool LeftSide(const Instruction& instruction) {
  for (const auto& [name, value] : instruction.attributes().opaque) {
    if (name == "left_side") return value == "true";
  }
  return false;
}

}  // namespace

// rng(a, b): scalars of one type; the declared dims. Uniform takes integers or floats, normal
// floats only.
Result<Shape> InferRngShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& a = OperandShape(instruction, 0);
  const Shape& b = OperandShape(instruction, 1);
  const bool normal = instruction.attributes().distribution == RandomDistribution::kNormal;
  const bool type_ok = IsFloating(a.dtype()) || (!normal && IsInteger(a.dtype()));
  if (a.rank() != 0 || !b.Compatible(a) || !type_ok) {
    return RuleError(instruction, "parameters {} and {} must be scalars of one {} type", Str(a),
                     Str(b), normal ? "floating-point" : "integer or floating-point");
  }
  if (!instruction.shape().IsArray()) {
    return RuleError(instruction, "declared shape {} must be an array", Str(instruction.shape()));
  }
  return Shape::Array(a.dtype(), instruction.shape().dims());
}

// rng-bit-generator(state): (state, output) with the declared output array.
Result<Shape> InferRngBitGeneratorShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& state = OperandShape(instruction, 0);
  const Shape& declared = instruction.shape();
  if (state.rank() != 1 || !IsUnsignedInteger(state.dtype())) {
    return RuleError(instruction, "state {} must be a rank-1 unsigned integer array", Str(state));
  }
  if (!declared.IsTuple() || declared.tuple_size() != 2 || !declared.tuple_shape(1).IsArray()) {
    return RuleError(instruction, "declared shape {} must be a tuple (state, output array)",
                     Str(declared));
  }
  return Shape::Tuple({state, declared.tuple_shape(1)});
}

// batch-norm-training(operand, scale, offset) -> (operand, mean[F], variance[F]);
// batch-norm-inference(operand, scale, offset, mean, variance) -> operand;
// batch-norm-grad(operand, scale, mean, variance, grad_output)
//   -> (grad_operand, grad_scale[F], grad_offset[F]); F = operand.dim(feature_index).
Result<Shape> InferBatchNormShape(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  ALPA_RETURN_IF_ERROR(
      CheckOperandCount(instruction, opcode == Opcode::kBatchNormTraining ? 3 : 5));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& operand = OperandShape(instruction, 0);
  const int64_t feature_index = instruction.attributes().feature_index;
  if (!IsFloating(operand.dtype())) {
    return RuleError(instruction, "operand {} must be floating-point", Str(operand));
  }
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return RuleError(instruction, "feature_index {} is out of range [0, {})", feature_index,
                     operand.rank());
  }
  const Shape feature = Shape::Array(operand.dtype(), {operand.dim(feature_index)});
  const Shape result = Shape::Tuple({operand, feature, feature});
  switch (opcode) {
    case Opcode::kBatchNormTraining:
      ALPA_RETURN_IF_ERROR(CheckOperandsAre(instruction, 1, 2, feature, "the feature vector"));
      return result;
    case Opcode::kBatchNormInference:
      ALPA_RETURN_IF_ERROR(CheckOperandsAre(instruction, 1, 4, feature, "the feature vector"));
      return operand;
    default:  // batch-norm-grad
      ALPA_RETURN_IF_ERROR(CheckOperandsAre(instruction, 1, 3, feature, "the feature vector"));
      ALPA_RETURN_IF_ERROR(CheckOperandsAre(instruction, 4, 4, operand, "the operand's shape"));
      return result;
  }
}

// a[..., n, n] of a floating or complex type (the matrix operand of cholesky and
// triangular-solve).
namespace {
Status CheckSquareMatrices(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& a = OperandShape(instruction, 0);
  if (a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2) ||
      !(IsFloating(a.dtype()) || IsComplex(a.dtype()))) {
    return RuleError(instruction, "operand {} must be floating-point square matrices [..., n, n]",
                     Str(a));
  }
  return Status::Ok();
}
}  // namespace

// cholesky(a) -> a's shape.
Result<Shape> InferCholeskyShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckSquareMatrices(instruction));
  return OperandShape(instruction, 0);
}

// triangular-solve(a[..., n, n], b): b is [..., n, k] (left_side=true) or [..., k, n], with a's
// batch dims; the result is b's shape.
Result<Shape> InferTriangularSolveShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckSquareMatrices(instruction));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 1));
  const Shape& a = OperandShape(instruction, 0);
  const Shape& b = OperandShape(instruction, 1);
  const int64_t rank = a.rank();
  bool ok = b.rank() == rank && b.dtype() == a.dtype();
  for (int64_t i = 0; ok && i < rank - 2; ++i) ok = b.dim(i) == a.dim(i);
  const int64_t n = a.dim(rank - 1);
  if (ok) ok = LeftSide(instruction) ? b.dim(rank - 2) == n : b.dim(rank - 1) == n;
  if (!ok) {
    return RuleError(instruction, "b {} does not match a {} (left_side={})", Str(b), Str(a),
                     LeftSide(instruction));
  }
  return b;
}

Result<Shape> InferAfterAllShape(const Instruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (!OperandShape(instruction, i).IsToken()) {
      return RuleError(instruction, "operand {} must be a token but has shape {}", i,
                       Str(OperandShape(instruction, i)));
    }
  }
  return Shape::Token();
}

// add-dependency(value, token) -> value.
Result<Shape> InferAddDependencyShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  if (!OperandShape(instruction, 1).IsToken()) {
    return RuleError(instruction, "operand 1 must be a token but has shape {}",
                     Str(OperandShape(instruction, 1)));
  }
  return OperandShape(instruction, 0);
}

// copy-start(x) -> (x, x, u32[] context); copy-done(start) -> x.
Result<Shape> InferCopyStartShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& operand = OperandShape(instruction, 0);
  return Shape::Tuple({operand, operand, Shape::Scalar(DType::kU32)});
}

Result<Shape> InferCopyDoneShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& start = OperandShape(instruction, 0);
  if (!start.IsTuple() || start.tuple_size() < 1) {
    return RuleError(instruction, "operand must be the tuple of a copy-start but has shape {}",
                     Str(start));
  }
  return start.tuple_shape(0);
}

}  // namespace alpa::ir::shape_inference_internal
