// compare, select and clamp.
#include <bit>
#include <complex>
#include <cstring>
#include <type_traits>

#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"
#include "interp/scalar_ops.h"

namespace alpa::interp::internal {
namespace {

using ir::ComparisonDirection;
using ir::Literal;

// Total order of IEEE floats as signed integers: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
// Negative values have all bits but the sign flipped so that larger magnitudes sort lower.
template <typename T>
auto TotalOrderKey(T value) {
  using Bits = std::conditional_t<sizeof(T) == 2, int16_t,
                                  std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>;
  Bits bits;
  std::memcpy(&bits, &value, sizeof(T));
  return bits < 0 ? static_cast<Bits>(bits ^ std::numeric_limits<Bits>::max()) : bits;
}

template <typename K>
bool Ordered(ComparisonDirection direction, K a, K b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

template <typename K>
bool Compare(ComparisonDirection direction, K a, K b) {
  if constexpr (kIsComplex<K>) {
    // Complex values are only equal or not (the caller rejects the ordered directions).
    return (a == b) == (direction == ComparisonDirection::kEq);
  } else {
    return Ordered(direction, a, b);
  }
}

template <typename T, typename KeyFn>
Literal CompareLoop(const Literal& a, const Literal& b, const ir::Shape& shape,
                    ComparisonDirection direction, KeyFn key) {
  Literal output = Literal::CreateZeros(shape);
  const T* x = a.typed_data<T>();
  const T* y = b.typed_data<T>();
  bool* out = output.typed_data<bool>();
  const int64_t n = output.element_count();
  for (int64_t i = 0; i < n; ++i) out[i] = Compare(direction, key(x[i]), key(y[i]));
  return output;
}

// Copies element i of `on_true` or `on_false` into `out`, chosen by `pred` (scalar or per element).
template <int kBytes>
void SelectLoop(const Literal& pred, const Literal& on_true, const Literal& on_false,
                Literal& out) {
  const bool* p = pred.typed_data<bool>();
  const int64_t step = pred.element_count() == 1 ? 0 : 1;
  const int64_t n = out.element_count();
  for (int64_t i = 0; i < n; ++i) {
    const Literal& source = p[i * step] ? on_true : on_false;
    std::memcpy(out.data() + i * kBytes, source.data() + i * kBytes, kBytes);
  }
}

}  // namespace

Result<Literal> EvaluateCompare(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const ir::Shape& shape = instruction.shape();
  if (!a.shape().Compatible(b.shape()) || !shape.IsArray() ||
      shape.dtype() != ir::DType::kPred || shape.dims() != a.shape().dims()) {
    return InvalidArgument("compare of {} and {} must give pred of the same dimensions, not {}",
                           a.shape().ToString(false), b.shape().ToString(false),
                           shape.ToString(false));
  }
  const ir::Attributes& attributes = instruction.attributes();
  const ComparisonDirection direction = attributes.comparison_direction;
  const bool total_order = attributes.comparison_type == ir::ComparisonType::kTotalOrder;
  return VisitDType(a.shape().dtype(), [&](auto tag) -> Result<Literal> {
    using T = typename decltype(tag)::type;
    if constexpr (kIsComplex<T>) {
      if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
        return InvalidArgument("complex values compare only with EQ or NE, not {}",
                               ir::ComparisonDirectionName(direction));
      }
      return CompareLoop<T>(a, b, shape, direction, [](T x) { return x; });
    } else if constexpr (kIsFloat<T>) {
      if (total_order) {
        return CompareLoop<T>(a, b, shape, direction, [](T x) { return TotalOrderKey(x); });
      }
      return CompareLoop<T>(a, b, shape, direction,
                            [](T x) { return static_cast<ComputeType<T>>(x); });
    } else {
      return CompareLoop<T>(a, b, shape, direction, [](T x) { return x; });
    }
  });
}

Result<Literal> EvaluateSelect(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 3));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& pred = *operands[0];
  const Literal& on_true = *operands[1];
  const Literal& on_false = *operands[2];
  const ir::Shape& shape = instruction.shape();
  if (pred.shape().dtype() != ir::DType::kPred ||
      (pred.shape().rank() != 0 && pred.shape().dims() != shape.dims()) ||
      !on_true.shape().Compatible(shape) || !on_false.shape().Compatible(shape)) {
    return InvalidArgument(
        "select needs a pred of the result's dimensions (or a scalar pred) and two operands of "
        "the result shape {}; got {}, {}, {}",
        shape.ToString(false), pred.shape().ToString(false), on_true.shape().ToString(false),
        on_false.shape().ToString(false));
  }
  Literal output = Literal::CreateZeros(shape);
  switch (ir::DTypeByteSize(shape.dtype())) {
    case 1: SelectLoop<1>(pred, on_true, on_false, output); break;
    case 2: SelectLoop<2>(pred, on_true, on_false, output); break;
    case 4: SelectLoop<4>(pred, on_true, on_false, output); break;
    case 8: SelectLoop<8>(pred, on_true, on_false, output); break;
    case 16: SelectLoop<16>(pred, on_true, on_false, output); break;
    default:
      return Unimplemented("select on element type {}", ir::DTypeName(shape.dtype()));
  }
  return output;
}

// clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi may be scalars.
Result<Literal> EvaluateClamp(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 3));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& lo = *operands[0];
  const Literal& x = *operands[1];
  const Literal& hi = *operands[2];
  const ir::Shape& shape = instruction.shape();
  auto fits = [&](const Literal& bound) {
    return bound.shape().dtype() == shape.dtype() &&
           (bound.shape().rank() == 0 || bound.shape().dims() == shape.dims());
  };
  if (!x.shape().Compatible(shape) || !fits(lo) || !fits(hi)) {
    return InvalidArgument("clamp bounds {} and {} must be scalars or of the operand shape {}",
                           lo.shape().ToString(false), hi.shape().ToString(false),
                           x.shape().ToString(false));
  }
  return VisitDType(shape.dtype(), [&](auto tag) -> Result<Literal> {
    using T = typename decltype(tag)::type;
    if constexpr (kIsComplex<T>) {
      return InvalidArgument("clamp is not defined on complex values");
    } else {
      Literal output = Literal::CreateZeros(shape);
      const T* in = x.typed_data<T>();
      const T* low = lo.typed_data<T>();
      const T* high = hi.typed_data<T>();
      const int64_t lo_step = lo.element_count() == 1 ? 0 : 1;
      const int64_t hi_step = hi.element_count() == 1 ? 0 : 1;
      T* out = output.typed_data<T>();
      for (int64_t i = 0; i < output.element_count(); ++i) {
        out[i] = MinimumOp::Apply<T>(MaximumOp::Apply<T>(in[i], low[i * lo_step]),
                                     high[i * hi_step]);
      }
      return output;
    }
  });
}

}  // namespace alpa::interp::internal
