// reduce-precision(x), exponent_bits=E, mantissa_bits=M: rounds every element to the nearest
// value of a float format with E exponent and M mantissa bits, kept in the operand's type.
//
// The arithmetic is XLA's (EmitReducePrecisionIR, as called for the HLO op), done on the
// operand's own bits (f16 and bf16 are not widened to f32 first, which would change which values
// count as denormal):
//   1. Mantissa, when M < the type's m: round to nearest even by adding a bias and truncating.
//      With s = m - M, the bias is 2^(s-1) - 1 plus the lowest kept bit ((x >> s) & 1); a carry
//      out of the mantissa increments the exponent, which is the correct rounded value.
//   2. Exponent, when E < the type's e: with b = 2^(e-1) - 1 and r = 2^(E-1) - 1, a biased
//      exponent above b + r overflows to +-inf, one at or below b - r (the reduced format's
//      denormals included) flushes to +-0. Rounding happens first, so a value that rounds up past
//      the largest finite one (65520 in f16) becomes inf.
//   3. NaN (checked on the input) passes through unchanged, except that with M = 0 it becomes
//      +inf: no mantissa bit is left to tell NaN from inf.
// E >= the type's e leaves the exponent alone and M >= the type's m the mantissa, as in XLA.
#include <cstdint>
#include <cstring>
#include <optional>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// Layout of an IEEE-style binary float: sign, `exponent` bits, `mantissa` (stored) bits.
struct FloatFormat {
  int exponent;
  int mantissa;
};

std::optional<FloatFormat> FormatOf(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF16:
      return FloatFormat{5, 10};
    case ir::DType::kBF16:
      return FloatFormat{8, 7};
    case ir::DType::kF32:
      return FloatFormat{8, 23};
    case ir::DType::kF64:
      return FloatFormat{11, 52};
    default:
      return std::nullopt;
  }
}

// One element's bits `x` (an unsigned integer of the float's width) reduced to E, M.
template <typename U>
U ReduceBits(U x, FloatFormat src, int64_t exponent_bits, int64_t mantissa_bits) {
  constexpr int kBits = static_cast<int>(sizeof(U) * 8);
  const U sign_mask = U{1} << (kBits - 1);
  const U exponent_mask = static_cast<U>(((U{1} << src.exponent) - 1) << src.mantissa);
  // Exponent all ones and a nonzero mantissa.
  const bool is_nan = static_cast<U>(x & ~sign_mask) > exponent_mask;
  U y = x;
  if (mantissa_bits < src.mantissa) {
    const int shift = src.mantissa - static_cast<int>(mantissa_bits);
    const U last_kept = U{1} << shift;
    const U bias = static_cast<U>((last_kept >> 1) - 1 + ((y & last_kept) >> shift));
    y = static_cast<U>((y + bias) & ~(last_kept - 1));
  }
  if (exponent_bits < src.exponent) {
    const U bias = (U{1} << (src.exponent - 1)) - 1;
    const U reduced_bias = (U{1} << (exponent_bits - 1)) - 1;
    const U max_exponent = static_cast<U>((bias + reduced_bias) << src.mantissa);
    const U min_exponent = static_cast<U>((bias - reduced_bias) << src.mantissa);
    const U exponent = y & exponent_mask;
    const U signed_zero = y & sign_mask;
    if (exponent > max_exponent) y = signed_zero | exponent_mask;
    if (exponent <= min_exponent) y = signed_zero;
  }
  if (is_nan) return mantissa_bits > 0 ? x : exponent_mask;  // exponent_mask alone is +inf
  return y;
}

template <typename U>
void ReduceAll(const Literal& in, Literal& out, FloatFormat src, int64_t exponent_bits,
               int64_t mantissa_bits) {
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i) {
    U bits;
    std::memcpy(&bits, in.data() + i * static_cast<int64_t>(sizeof(U)), sizeof(U));
    bits = ReduceBits<U>(bits, src, exponent_bits, mantissa_bits);
    std::memcpy(out.data() + i * static_cast<int64_t>(sizeof(U)), &bits, sizeof(U));
  }
}

}  // namespace

Result<Literal> EvaluateReducePrecision(const ir::Instruction& instruction,
                                        const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const ir::DType dtype = in.shape().dtype();
  const std::optional<FloatFormat> src = FormatOf(dtype);
  if (!src.has_value()) {
    return Unimplemented("reduce-precision is not defined on element type {}",
                         ir::DTypeName(dtype));
  }
  if (!instruction.shape().Compatible(in.shape())) {
    return InvalidArgument("result shape {} does not match operand {}",
                           instruction.shape().ToString(false), in.shape().ToString(false));
  }
  const int64_t exponent_bits = instruction.attributes().exponent_bits;
  const int64_t mantissa_bits = instruction.attributes().mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("needs exponent_bits >= 1 and mantissa_bits >= 0 but has {} and {}",
                           exponent_bits, mantissa_bits);
  }
  Literal out = Literal::CreateZeros(in.shape());
  switch (ir::DTypeByteSize(dtype)) {
    case 2:
      ReduceAll<uint16_t>(in, out, *src, exponent_bits, mantissa_bits);
      break;
    case 4:
      ReduceAll<uint32_t>(in, out, *src, exponent_bits, mantissa_bits);
      break;
    default:
      ReduceAll<uint64_t>(in, out, *src, exponent_bits, mantissa_bits);
      break;
  }
  return out;
}

}  // namespace alpa::interp::internal
