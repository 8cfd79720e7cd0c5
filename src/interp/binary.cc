// Elementwise binary ops; the scalar semantics live in scalar_ops.h.
#include <complex>
#include <type_traits>

#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"
#include "interp/scalar_ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;
using ir::Opcode;

template <typename Op, typename T>
Result<Literal> Apply(const Literal& a, const Literal& b, const ir::Shape& shape) {
  if constexpr (!Op::template kSupports<T>) {
    return Unimplemented("not defined on element type {}", ir::DTypeName(a.shape().dtype()));
  } else {
    Literal output = Literal::CreateZeros(shape);
    const T* x = a.typed_data<T>();
    const T* y = b.typed_data<T>();
    T* out = output.typed_data<T>();
    const int64_t n = output.element_count();
    for (int64_t i = 0; i < n; ++i) out[i] = Op::template Apply<T>(x[i], y[i]);
    return output;
  }
}

template <typename T>
Result<Literal> ApplyOpcode(Opcode opcode, const Literal& a, const Literal& b,
                            const ir::Shape& shape) {
  switch (opcode) {
    case Opcode::kAdd: return Apply<AddOp, T>(a, b, shape);
    case Opcode::kSubtract: return Apply<SubtractOp, T>(a, b, shape);
    case Opcode::kMultiply: return Apply<MultiplyOp, T>(a, b, shape);
    case Opcode::kDivide: return Apply<DivideOp, T>(a, b, shape);
    case Opcode::kRemainder: return Apply<RemainderOp, T>(a, b, shape);
    case Opcode::kMaximum: return Apply<MaximumOp, T>(a, b, shape);
    case Opcode::kMinimum: return Apply<MinimumOp, T>(a, b, shape);
    case Opcode::kPower: return Apply<PowerOp, T>(a, b, shape);
    case Opcode::kAtan2: return Apply<Atan2Op, T>(a, b, shape);
    case Opcode::kAnd: return Apply<AndOp, T>(a, b, shape);
    case Opcode::kOr: return Apply<OrOp, T>(a, b, shape);
    case Opcode::kXor: return Apply<XorOp, T>(a, b, shape);
    case Opcode::kShiftLeft: return Apply<ShiftLeftOp, T>(a, b, shape);
    case Opcode::kShiftRightLogical: return Apply<ShiftRightLogicalOp, T>(a, b, shape);
    case Opcode::kShiftRightArithmetic: return Apply<ShiftRightArithmeticOp, T>(a, b, shape);
    default:
      return Unimplemented("{} is not an elementwise binary op", ir::OpcodeName(opcode));
  }
}

// complex(re, im): f32 x f32 -> c64, f64 x f64 -> c128.
Result<Literal> MakeComplex(const Literal& re, const Literal& im, const ir::Shape& shape) {
  Literal output = Literal::CreateZeros(shape);
  const int64_t n = output.element_count();
  if (re.shape().dtype() == ir::DType::kF32 && shape.dtype() == ir::DType::kC64) {
    for (int64_t i = 0; i < n; ++i) {
      output.typed_data<std::complex<float>>()[i] = {re.typed_data<float>()[i],
                                                     im.typed_data<float>()[i]};
    }
  } else if (re.shape().dtype() == ir::DType::kF64 && shape.dtype() == ir::DType::kC128) {
    for (int64_t i = 0; i < n; ++i) {
      output.typed_data<std::complex<double>>()[i] = {re.typed_data<double>()[i],
                                                      im.typed_data<double>()[i]};
    }
  } else {
    return InvalidArgument("complex of {} gives c64 (from f32) or c128 (from f64), not {}",
                           ir::DTypeName(re.shape().dtype()), shape.ToString(false));
  }
  return output;
}

}  // namespace

Result<Literal> EvaluateBinary(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const ir::Shape& shape = instruction.shape();
  if (!a.shape().Compatible(b.shape()) || !shape.IsArray() || shape.dims() != a.shape().dims()) {
    return InvalidArgument("operands {} and {} and result {} must have the same dimensions",
                           a.shape().ToString(false), b.shape().ToString(false),
                           shape.ToString(false));
  }
  if (instruction.opcode() == Opcode::kComplex) return MakeComplex(a, b, shape);
  if (shape.dtype() != a.shape().dtype()) {
    return InvalidArgument("result element type {} differs from the operands' {}",
                           ir::DTypeName(shape.dtype()), ir::DTypeName(a.shape().dtype()));
  }
  return VisitDType(a.shape().dtype(), [&](auto tag) -> Result<Literal> {
    return ApplyOpcode<typename decltype(tag)::type>(instruction.opcode(), a, b, shape);
  });
}

}  // namespace alpa::interp::internal
