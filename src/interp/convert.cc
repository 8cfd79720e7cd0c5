// convert and bitcast-convert.
//
// convert follows XLA: float -> integer truncates toward zero and saturates at the integer's
// range, NaN -> 0; integer -> integer wraps around; anything -> pred is `x != 0`; complex -> real
// keeps the real part; real -> complex has imaginary part 0. f64 -> f16/bf16 rounds once (through
// a round-to-odd f32, which is exact for targets with at most 22 mantissa bits).
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// `value` rounded to f32 toward zero, with the last mantissa bit set when inexact ("round to
// odd"): rounding this f32 to a narrower type gives the same result as rounding `value` directly.
float RoundToOddFloat(double value) {
  float f = static_cast<float>(value);
  if (!std::isfinite(value) || static_cast<double>(f) == value) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(value)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

template <typename To>
To FloatToInt(double value) {
  if (std::isnan(value)) return 0;
  // Bounds as doubles: min is exact (a power of two or 0); max+1 is exact, max may not be.
  const double lo = static_cast<double>(std::numeric_limits<To>::min());
  const double hi_exclusive = 2.0 * static_cast<double>(std::numeric_limits<To>::max() / 2 + 1);
  if (value <= lo) return std::numeric_limits<To>::min();
  if (value >= hi_exclusive) return std::numeric_limits<To>::max();
  return static_cast<To>(std::trunc(value));
}

template <typename From, typename To>
To ConvertScalar(From x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsComplex<From>) {
      return x != From(0);
    } else {
      return static_cast<ComputeType<From>>(x) != 0;
    }
  } else if constexpr (kIsComplex<From>) {
    return ConvertScalar<typename From::value_type, To>(x.real());
  } else if constexpr (kIsComplex<To>) {
    using R = typename To::value_type;
    return To(ConvertScalar<From, R>(x), R(0));
  } else if constexpr (kIsInt<To>) {
    if constexpr (kIsFloat<From>) {
      return FloatToInt<To>(static_cast<double>(static_cast<ComputeType<From>>(x)));
    } else {
      return static_cast<To>(x);  // integer or pred: modular
    }
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float> || std::is_same_v<From, Half> ||
                  std::is_same_v<From, BFloat16> || std::is_same_v<From, bool>) {
      return static_cast<To>(static_cast<float>(x));
    } else {
      return static_cast<To>(RoundToOddFloat(static_cast<double>(x)));
    }
  } else {
    return static_cast<To>(static_cast<ComputeType<From>>(x));
  }
}

}  // namespace

Result<Literal> ConvertLiteral(const Literal& input, ir::DType to) {
  if (!input.shape().IsArray()) {
    return InvalidArgument("convert of non-array {}", input.shape().ToString(false));
  }
  ir::Shape shape = ir::Shape::Array(to, input.shape().dims());
  return VisitDType(input.shape().dtype(), [&](auto from_tag) -> Result<Literal> {
    using From = typename decltype(from_tag)::type;
    return VisitDType(to, [&](auto to_tag) -> Result<Literal> {
      using To = typename decltype(to_tag)::type;
      Literal output = Literal::CreateZeros(shape);
      const From* in = input.typed_data<From>();
      To* out = output.typed_data<To>();
      for (int64_t i = 0; i < output.element_count(); ++i) out[i] = ConvertScalar<From, To>(in[i]);
      return output;
    });
  });
}

Result<Literal> EvaluateConvert(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const ir::Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.dims() != operands[0]->shape().dims()) {
    return InvalidArgument("convert from {} to {} changes the dimensions",
                           operands[0]->shape().ToString(false), shape.ToString(false));
  }
  return ConvertLiteral(*operands[0], shape.dtype());
}

// Reinterprets the bytes. Between types of different widths XLA adds or removes a minor
// dimension of size width ratio; with row-major little-endian storage that is the same bytes.
Result<Literal> EvaluateBitcastConvert(const ir::Instruction& instruction,
                                       const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& input = *operands[0];
  const ir::Shape& shape = instruction.shape();
  auto is_4bit = [](ir::DType dtype) {
    return dtype == ir::DType::kS4 || dtype == ir::DType::kU4;
  };
  if (!shape.IsArray() || shape.ByteSize() != input.shape().ByteSize() ||
      is_4bit(shape.dtype()) != is_4bit(input.shape().dtype())) {
    return InvalidArgument("bitcast-convert from {} to {} changes the number of bits",
                           input.shape().ToString(false), shape.ToString(false));
  }
  Literal output = Literal::CreateZeros(shape);
  if (output.size_bytes() > 0) {
    std::memcpy(output.data(), input.data(), static_cast<size_t>(output.size_bytes()));
  }
  return output;
}

}  // namespace alpa::interp::internal
