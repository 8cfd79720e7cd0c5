// Internal to the kernels layer: the C++ storage type of each supported dtype, the type a
// reduction accumulates in, and f16/bf16 <-> f32 conversion for the f32 paths.
#ifndef ALPA_KERNELS_ELEMENT_TYPE_H_
#define ALPA_KERNELS_ELEMENT_TYPE_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/dtype.h"
#include "ir/element_type.h"
#include "kernels/half_conversion.h"
#include "support/status.h"

namespace alpa::kernels::internal {

using ir::TypeTag;

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
  auto unsupported = [dtype, what] {
    return Unimplemented(
        "{} does not support element type {}; supported: f16, bf16, f32, f64, c64, c128, "
        "s8-s64, u8-u64 (convert the operands first)",
        what, ir::DTypeName(dtype));
  };
  return ir::VisitElementType(
      dtype,
      [&](auto tag) -> Status {
        if constexpr (std::is_same_v<typename decltype(tag)::type, bool>) {
          return unsupported();
        } else {
          return fn(tag);
        }
      },
      unsupported);
}

// This thread's f32 buffer number `slot` (0 to 2: two operands and a result), holding at least
// `count` values. The buffers only grow and live as long as the thread, like a kernel workspace:
// a 16-bit kernel called again with sizes it has seen allocates, and page-faults, nothing. (With a
// fresh buffer per call, the widened f16 matmuls of bench/kernels_bench.cc ran 2.3 to 8.9 times
// slower on this VM, and as erratically as its page faults.)
inline float* ThreadF32Scratch(int slot, int64_t count) {
  thread_local std::vector<float> buffers[3];
  std::vector<float>& buffer = buffers[slot];
  if (buffer.size() < static_cast<size_t>(count)) buffer.resize(static_cast<size_t>(count));
  return buffer.data();
}

// f16/bf16 buffer of `count` elements widened to f32 into this thread's scratch `slot`.
template <typename T>
const float* WidenToF32(int slot, const void* data, int64_t count) {
  const T* in = static_cast<const T*>(data);
  float* out = ThreadF32Scratch(slot, count);
  if constexpr (std::is_same_v<T, Eigen::half>) {
    WidenF16ToF32(in, out, count);
  } else {
    WidenBF16ToF32(in, out, count);
  }
  return out;
}

// `count` f32 values rounded (to nearest even) into f16/bf16.
template <typename T>
void NarrowFromF32(const float* values, int64_t count, void* data) {
  T* out = static_cast<T*>(data);
  if constexpr (std::is_same_v<T, Eigen::half>) {
    NarrowF32ToF16(values, out, count);
  } else {
    NarrowF32ToBF16(values, out, count);
  }
}

// An f32 kernel run on 16-bit operands: `lhs` and `rhs` widened into this thread's scratch,
// `f32_kernel(lhs32, rhs32, out32)` run, and its result rounded once into `out`. The fallback of
// the 16-bit matmul and convolution where oneDNN has no 16-bit kernel for this CPU.
template <typename T, typename F32Kernel>
Status RunWidenedToF32(const void* lhs, int64_t lhs_count, const void* rhs, int64_t rhs_count,
                       void* out, int64_t out_count, const F32Kernel& f32_kernel) {
  const float* lhs32 = WidenToF32<T>(0, lhs, lhs_count);
  const float* rhs32 = WidenToF32<T>(1, rhs, rhs_count);
  float* out32 = ThreadF32Scratch(2, out_count);
  ALPA_RETURN_IF_ERROR(f32_kernel(lhs32, rhs32, out32));
  NarrowFromF32<T>(out32, out_count, out);
  return Status::Ok();
}

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_ELEMENT_TYPE_H_
