#include "runtime/reduce_buffers.h"

#include <algorithm>
#include <type_traits>

#include "ir/element_type.h"

namespace alpa::runtime {
namespace {

// The type element k is combined in: f32 for the 16-bit floats (one rounding at the end, as
// XLA's CPU reductions do); for integer sums the unsigned type, whose overflow wraps without
// undefined behaviour; otherwise the element type itself (max and min are exact in any type).
template <typename T, ReduceOp kOp>
struct AccumulatorOf {
  using type = T;
};
template <ReduceOp kOp>
struct AccumulatorOf<Eigen::half, kOp> {
  using type = float;
};
template <ReduceOp kOp>
struct AccumulatorOf<Eigen::bfloat16, kOp> {
  using type = float;
};
template <typename T>
requires std::is_integral_v<T>
struct AccumulatorOf<T, ReduceOp::kSum> {
  using type = std::make_unsigned_t<T>;
};
template <typename T, ReduceOp kOp>
using Accumulator = typename AccumulatorOf<T, kOp>::type;

template <ReduceOp kOp, typename A>
A Combine(A a, A b) {
  if constexpr (kOp == ReduceOp::kSum) {
    return static_cast<A>(a + b);
  } else if constexpr (kOp == ReduceOp::kMax) {
    return (a != a || a > b) ? a : b;  // a NaN in either wins
  } else {
    return (a != a || a < b) ? a : b;
  }
}

// Tiles of kTile elements accumulate in a local array that stays in L1, so each input is streamed
// once and the inner loops over k vectorise (`omp simd`: at -O2 GCC leaves them scalar, which
// made an f32 sum several times slower than memcpy).
template <typename T, ReduceOp kOp>
void Reduce(std::span<const void* const> inputs, void* output, int64_t count) {
  using A = Accumulator<T, kOp>;
  constexpr int64_t kTile = 2048;
  A acc[kTile];
  T* out = static_cast<T*>(output);
  for (int64_t begin = 0; begin < count; begin += kTile) {
    const int64_t n = std::min(kTile, count - begin);
    const T* first = static_cast<const T*>(inputs[0]) + begin;
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) acc[k] = static_cast<A>(first[k]);
    for (size_t p = 1; p < inputs.size(); ++p) {
      const T* in = static_cast<const T*>(inputs[p]) + begin;
#pragma omp simd
      for (int64_t k = 0; k < n; ++k) acc[k] = Combine<kOp>(acc[k], static_cast<A>(in[k]));
    }
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) out[begin + k] = static_cast<T>(acc[k]);
  }
}

template <typename T>
constexpr bool kReducible = !std::is_same_v<T, bool> && !std::is_same_v<T, std::complex<float>> &&
                            !std::is_same_v<T, std::complex<double>>;

}  // namespace

Status CheckReduction(ir::DType dtype, ReduceOp op) {
  auto unsupported = [&] {
    return Unimplemented(
        "a {} reduction of {} is not supported; reductions take f16, bf16, f32, f64, s8-s64 and "
        "u8-u64",
        ReduceOpName(op), ir::DTypeName(dtype));
  };
  return ir::VisitElementType(
      dtype,
      [&](auto tag) -> Status {
        return kReducible<typename decltype(tag)::type> ? Status::Ok() : unsupported();
      },
      unsupported);
}

void ReduceElements(ir::DType dtype, ReduceOp op, std::span<const void* const> inputs, void* output,
                    int64_t count) {
  ALPA_CHECK(!inputs.empty(), "a reduction needs at least one input");
  ir::VisitElementType(
      dtype,
      [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (kReducible<T>) {
          switch (op) {
            case ReduceOp::kSum:
              return Reduce<T, ReduceOp::kSum>(inputs, output, count);
            case ReduceOp::kMax:
              return Reduce<T, ReduceOp::kMax>(inputs, output, count);
            case ReduceOp::kMin:
              return Reduce<T, ReduceOp::kMin>(inputs, output, count);
          }
        }
        ALPA_CHECK(false, "ReduceElements: {} is not reducible", ir::DTypeName(dtype));
      },
      [&] { ALPA_CHECK(false, "ReduceElements: {} is not reducible", ir::DTypeName(dtype)); });
}

}  // namespace alpa::runtime
