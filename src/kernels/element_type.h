// Internal to the kernels layer: the C++ storage type of each supported dtype, the type a
// reduction accumulates in, and f16/bf16 <-> f32 conversion for the oneDNN f32 paths.
#ifndef ALPA_KERNELS_ELEMENT_TYPE_H_
#define ALPA_KERNELS_ELEMENT_TYPE_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::kernels::internal {

template <typename T>
struct TypeTag {
  using type = T;
};

// Accumulator of a dot or convolution over elements of T:
// - f16/bf16 accumulate in f32 and round once on store (XLA's CPU backend does the same);
// - integers accumulate in the unsigned type of at least 32 bits, so overflow wraps modulo 2^bits
//   with no undefined behaviour (narrower types are promoted to int, whose products could
//   overflow), and truncation on store gives the result modulo 2^bits of T;
// - f32, f64 and complex accumulate in themselves.
template <typename T>
struct AccumulatorOf {
  using type = T;
};
template <>
struct AccumulatorOf<Eigen::half> {
  using type = float;
};
template <>
struct AccumulatorOf<Eigen::bfloat16> {
  using type = float;
};
template <typename T>
requires std::is_integral_v<T>
struct AccumulatorOf<T> {
  using type = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
};
template <typename T>
using Accumulator = typename AccumulatorOf<T>::type;

template <typename T>
Accumulator<T> Widen(T value) {
  if constexpr (std::is_integral_v<T>) {
    // Sign-extend first, then reinterpret modulo 2^bits of the accumulator.
    return static_cast<Accumulator<T>>(static_cast<int64_t>(value));
  } else {
    return static_cast<Accumulator<T>>(value);
  }
}

// Calls fn(TypeTag<T>{}) for every dtype the kernels compute with; returns Unimplemented naming
// `dtype` and `what` (the kernel) otherwise.
template <typename Fn>
Status VisitKernelDType(ir::DType dtype, const char* what, Fn&& fn) {
  using ir::DType;
  switch (dtype) {
    case DType::kS8:
      return fn(TypeTag<int8_t>{});
    case DType::kS16:
      return fn(TypeTag<int16_t>{});
    case DType::kS32:
      return fn(TypeTag<int32_t>{});
    case DType::kS64:
      return fn(TypeTag<int64_t>{});
    case DType::kU8:
      return fn(TypeTag<uint8_t>{});
    case DType::kU16:
      return fn(TypeTag<uint16_t>{});
    case DType::kU32:
      return fn(TypeTag<uint32_t>{});
    case DType::kU64:
      return fn(TypeTag<uint64_t>{});
    case DType::kF16:
      return fn(TypeTag<Eigen::half>{});
    case DType::kBF16:
      return fn(TypeTag<Eigen::bfloat16>{});
    case DType::kF32:
      return fn(TypeTag<float>{});
    case DType::kF64:
      return fn(TypeTag<double>{});
    case DType::kC64:
      return fn(TypeTag<std::complex<float>>{});
    case DType::kC128:
      return fn(TypeTag<std::complex<double>>{});
    default:
      return Unimplemented(
          "{} does not support element type {}; supported: f16, bf16, f32, f64, c64, c128, "
          "s8-s64, u8-u64 (convert the operands first)",
          what, ir::DTypeName(dtype));
  }
}

// f16/bf16 buffer of `count` elements widened to f32.
template <typename T>
std::vector<float> WidenToF32(const void* data, int64_t count) {
  const T* in = static_cast<const T*>(data);
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
  return out;
}

// f32 buffer rounded (to nearest even) into f16/bf16.
template <typename T>
void NarrowFromF32(const std::vector<float>& values, void* data) {
  T* out = static_cast<T*>(data);
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
}

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_ELEMENT_TYPE_H_
