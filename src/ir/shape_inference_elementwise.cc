// Shape rules of elementwise ops: operands share dims, and the result keeps them.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The element type of a complex type's parts: c64 -> f32, c128 -> f64.
DType ComplexComponentType(DType dtype) { return dtype == DType::kC64 ? DType::kF32 : DType::kF64; }

// Bits of one element: the storage size, except s4/u4 which pack 4 bits.
int64_t BitWidth(DType dtype) {
  if (dtype == DType::kS4 || dtype == DType::kU4) return 4;
  return DTypeByteSize(dtype) * 8;
}

// What element types a unary op accepts, and the error word for the rest.
struct UnaryTypeRule {
  bool (*accepts)(DType);
  std::string_view what;
};

bool FloatingOrComplex(DType dtype) { return IsFloating(dtype) || IsComplex(dtype); }
bool PredOrInteger(DType dtype) { return dtype == DType::kPred || IsInteger(dtype); }
bool Numeric(DType dtype) { return dtype != DType::kPred && IsArrayDType(dtype); }
bool SignedOrComplex(DType dtype) {
  return IsSignedInteger(dtype) || IsFloating(dtype) || IsComplex(dtype);
}

UnaryTypeRule UnaryRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kCeil:
    case Opcode::kFloor:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kErf:
    case Opcode::kIsFinite:
      return {IsFloating, "a floating-point"};
    case Opcode::kNot:
      return {PredOrInteger, "a pred or integer"};
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      return {IsInteger, "an integer"};
    // XLA rejects abs and sign of unsigned integers (there is no sign bit to act on); negate
    // wraps them around.
    case Opcode::kAbs:
    case Opcode::kSign:
      return {SignedOrComplex, "a signed or complex"};
    case Opcode::kNegate:
      return {Numeric, "a numeric"};
    default:  // exponential, log, sqrt, tanh, real, imag, ...
      return {FloatingOrComplex, "a floating-point or complex"};
  }
}

// Both operands are arrays of equal dims; with `same_dtype`, of equal element types too.
Status CheckSameDims(const Instruction& instruction, bool same_dtype) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  if (lhs.dims() != rhs.dims()) {
    return RuleError(instruction, "operands must have equal dimensions but have shapes {} and {}",
                     Str(lhs), Str(rhs));
  }
  if (same_dtype && lhs.dtype() != rhs.dtype()) {
    return RuleError(instruction,
                     "operands must have equal element types but have shapes {} and {}", Str(lhs),
                     Str(rhs));
  }
  return Status::Ok();
}

}  // namespace

Result<Shape> InferUnaryShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const Opcode opcode = instruction.opcode();
  const UnaryTypeRule rule = UnaryRule(opcode);
  if (!rule.accepts(operand.dtype())) {
    return RuleError(instruction, "operand must have {} element type but has shape {}", rule.what,
                     Str(operand));
  }
  if (opcode == Opcode::kIsFinite) return Shape::Array(DType::kPred, operand.dims());
  const bool to_real = opcode == Opcode::kAbs || opcode == Opcode::kReal || opcode == Opcode::kImag;
  if (to_real && IsComplex(operand.dtype())) {
    return Shape::Array(ComplexComponentType(operand.dtype()), operand.dims());
  }
  return Shape::Array(operand.dtype(), operand.dims());
}

// Binary ops: equal dims and equal element types, as XLA requires (HLO has no implicit
// promotion or broadcasting). The exceptions: shifts take any two integer types and keep the
// lhs type; complex(f32, f32) -> c64 and complex(f64, f64) -> c128.
Result<Shape> InferBinaryShape(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  const bool is_shift = opcode == Opcode::kShiftLeft || opcode == Opcode::kShiftRightArithmetic ||
                        opcode == Opcode::kShiftRightLogical;
  ALPA_RETURN_IF_ERROR(CheckSameDims(instruction, /*same_dtype=*/!is_shift));
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  const DType dtype = lhs.dtype();
  switch (opcode) {
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      if (!IsInteger(dtype) || !IsInteger(rhs.dtype())) {
        return RuleError(instruction, "operands must be integers but have shapes {} and {}",
                         Str(lhs), Str(rhs));
      }
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (!PredOrInteger(dtype)) {
        return RuleError(instruction, "operands must be pred or integers but have shape {}",
                         Str(lhs));
      }
      break;
    case Opcode::kComplex:
      if (dtype != DType::kF32 && dtype != DType::kF64) {
        return RuleError(instruction, "operands must be f32 or f64 but have shape {}", Str(lhs));
      }
      return Shape::Array(dtype == DType::kF32 ? DType::kC64 : DType::kC128, lhs.dims());
    case Opcode::kAtan2:
      if (!FloatingOrComplex(dtype)) {
        return RuleError(instruction, "operands must be floating-point but have shape {}",
                         Str(lhs));
      }
      break;
    default:  // add, subtract, multiply, divide, maximum, minimum, power, remainder: any type
      break;
  }
  return Shape::Array(dtype, lhs.dims());
}

Result<Shape> InferCompareShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckSameDims(instruction, /*same_dtype=*/true));
  return Shape::Array(DType::kPred, OperandShape(instruction, 0).dims());
}

// select(pred, on_true, on_false): pred is a scalar or has the dims of on_true.
Result<Shape> InferSelectShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 3));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& pred = OperandShape(instruction, 0);
  const Shape& on_true = OperandShape(instruction, 1);
  const Shape& on_false = OperandShape(instruction, 2);
  if (pred.dtype() != DType::kPred) {
    return RuleError(instruction, "predicate must have element type pred but has shape {}",
                     Str(pred));
  }
  if (!on_true.Compatible(on_false)) {
    return RuleError(instruction, "on_true {} and on_false {} must have the same shape",
                     Str(on_true), Str(on_false));
  }
  if (pred.rank() != 0 && pred.dims() != on_true.dims()) {
    return RuleError(instruction, "predicate {} must be a scalar or have the dimensions of {}",
                     Str(pred), Str(on_true));
  }
  return on_true;
}

// clamp(min, operand, max): min and max are scalars or have the operand's dims.
Result<Shape> InferClampShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 3));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& operand = OperandShape(instruction, 1);
  for (int64_t i : {0, 2}) {
    const Shape& bound = OperandShape(instruction, i);
    if (bound.dtype() != operand.dtype() || (bound.rank() != 0 && bound.dims() != operand.dims())) {
      return RuleError(instruction,
                       "{} {} must be a scalar or an array with the shape of operand {}",
                       i == 0 ? "min" : "max", Str(bound), Str(operand));
    }
  }
  return operand;
}

// The target element type is the declared one (HLO text has no other place for it).
Result<Shape> InferConvertShape(const Instruction& instruction) {
  const bool stochastic = instruction.opcode() == Opcode::kStochasticConvert;
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, stochastic ? 2 : 1));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& operand = OperandShape(instruction, 0);
  if (!instruction.shape().IsArray()) {
    return RuleError(instruction, "declared shape {} must be an array", Str(instruction.shape()));
  }
  if (stochastic) {
    const Shape& random = OperandShape(instruction, 1);
    if (random.dims() != operand.dims() || !IsUnsignedInteger(random.dtype()) ||
        BitWidth(random.dtype()) != BitWidth(operand.dtype())) {
      return RuleError(instruction,
                       "random operand {} must be unsigned with the dims and bit width of {}",
                       Str(random), Str(operand));
    }
  }
  return Shape::Array(instruction.shape().dtype(), operand.dims());
}

// Same total bits. Between element types of different widths XLA adds (narrowing) or removes
// (widening) a trailing dimension of size wider_bits / narrower_bits:
//   f32[4] -> u8[4,4],  u8[4,4] -> f32[4].
Result<Shape> InferBitcastConvertShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& declared = instruction.shape();
  if (!declared.IsArray()) {
    return RuleError(instruction, "declared shape {} must be an array", Str(declared));
  }
  const int64_t in_bits = BitWidth(operand.dtype());
  const int64_t out_bits = BitWidth(declared.dtype());
  std::vector<int64_t> dims = operand.dims();
  if (in_bits > out_bits) {
    dims.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    const int64_t ratio = out_bits / in_bits;
    if (dims.empty() || dims.back() != ratio) {
      return RuleError(instruction,
                       "converting {} to {} needs a last operand dimension of size {} but the "
                       "operand has shape {}",
                       DTypeName(operand.dtype()), DTypeName(declared.dtype()), ratio,
                       Str(operand));
    }
    dims.pop_back();
  }
  return Shape::Array(declared.dtype(), std::move(dims));
}

Result<Shape> InferReducePrecisionShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const Attributes& attributes = instruction.attributes();
  if (!IsFloating(operand.dtype())) {
    return RuleError(instruction, "operand must be floating-point but has shape {}", Str(operand));
  }
  if (attributes.exponent_bits < 1 || attributes.mantissa_bits < 0) {
    return RuleError(instruction,
                     "needs exponent_bits >= 1 and mantissa_bits >= 0 but has {} and {}",
                     attributes.exponent_bits, attributes.mantissa_bits);
  }
  return operand;
}

// map(operands...) applies a scalar computation (T0, ..., Tn-1) -> R elementwise: R[dims].
Result<Shape> InferMapShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  const Shape& first = OperandShape(instruction, 0);
  const ProgramShape signature = CalleeSignature(instruction, 0);
  bool ok = static_cast<int64_t>(signature.parameters.size()) == instruction.operand_count() &&
            signature.result.IsArray() && signature.result.rank() == 0;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (operand.dims() != first.dims()) {
      return RuleError(instruction, "operands must have equal dimensions but have shapes {} and {}",
                       Str(first), Str(operand));
    }
    if (ok) ok = signature.parameters[i].Compatible(Shape::Scalar(operand.dtype()));
  }
  if (!ok) {
    return RuleError(instruction,
                     "to_apply %{} has signature {} but must map one scalar per operand "
                     "to a scalar",
                     instruction.to_apply()->name(), signature.ToString(false));
  }
  // XLA maps over all dimensions: `dimensions`, when given, must be {0, ..., rank-1}.
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  std::vector<int64_t> all(first.dims().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  if (!dimensions.empty() && dimensions != all) {
    return RuleError(instruction, "dimensions {{{}}} must list every dimension in order",
                     fmt::join(dimensions, ","));
  }
  return Shape::Array(signature.result.dtype(), first.dims());
}

}  // namespace alpa::ir::shape_inference_internal
