#include "kernels/reduce.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/element_type.h"
#include "kernels/half_conversion.h"
#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

// Each op on T (float or int32_t): its identity and its combine step. Maximum and minimum
// propagate NaN (once either side is NaN the result is); s32 sums wrap around, as XLA's do, so
// that any order gives the same bits.
template <typename T>
struct SumOp {
  static constexpr T kIdentity = T(0);
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
template <typename T>
struct MaxOp {
  static constexpr T kIdentity = std::numeric_limits<T>::has_infinity
                                     ? -std::numeric_limits<T>::infinity()
                                     : std::numeric_limits<T>::lowest();
  static T Apply(T a, T b) { return a > b || a != a ? a : b; }
};
template <typename T>
struct MinOp {
  static constexpr T kIdentity = std::numeric_limits<T>::has_infinity
                                     ? std::numeric_limits<T>::infinity()
                                     : std::numeric_limits<T>::max();
  static T Apply(T a, T b) { return a < b || a != a ? a : b; }
};

// Columns of `in` folded in lanes of kLanes (which the compiler maps to vector registers), the
// lanes then folded in a fixed tree: the order depends on n only, not on alignment or threads.
constexpr int kLanes = 8;

template <typename T, typename Op>
T FoldRow(const T* row, int64_t n) {
  T lanes[kLanes];
  std::fill(lanes, lanes + kLanes, Op::kIdentity);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = Op::Apply(lanes[j], row[i + j]);
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lanes[j] = Op::Apply(lanes[j], lanes[j + width]);
  }
  T result = lanes[0];
  for (; i < n; ++i) result = Op::Apply(result, row[i]);
  return result;
}

template <typename T, typename Op>
void ReduceRows(T init, const T* in, int64_t outer, int64_t reduce, T* out) {
  if (outer == 1 && reduce > internal::kElementGrain) {
    // One long row: chunk partials in parallel, added in chunk order.
    const int64_t grain = internal::kElementGrain;
    std::vector<T> partial(static_cast<size_t>(internal::ChunkCount(reduce, grain)));
    internal::ParallelFor(static_cast<int64_t>(partial.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        partial[static_cast<size_t>(c)] =
            FoldRow<T, Op>(in + c * grain, std::min(grain, reduce - c * grain));
      }
    });
    T acc = init;
    for (T p : partial) acc = Op::Apply(acc, p);
    out[0] = acc;
    return;
  }
  const int64_t rows_per_chunk = std::max<int64_t>(1, internal::kElementGrain / reduce);
  internal::ParallelFor(outer, rows_per_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      out[o] = Op::Apply(init, FoldRow<T, Op>(in + o * reduce, reduce));
  });
}

// inner > 1: each output column block starts at init and folds in the rows in order.
template <typename T, typename Op>
void ReduceColumns(T init, const T* in, int64_t outer, int64_t reduce, int64_t inner, T* out) {
  constexpr int64_t kBlock = 2048;  // output elements kept hot in L1 while the rows stream by
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t tasks_per_chunk =
      std::max<int64_t>(1, internal::kElementGrain / (reduce * std::min(inner, kBlock)));
  internal::ParallelFor(outer * blocks, tasks_per_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks;
      const int64_t first = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, inner - first);
      T* acc = out + o * inner + first;
      std::fill(acc, acc + width, init);
      for (int64_t r = 0; r < reduce; ++r) {
        const T* row = in + (o * reduce + r) * inner + first;
        for (int64_t i = 0; i < width; ++i) acc[i] = Op::Apply(acc[i], row[i]);
      }
    }
  });
}

template <typename T, typename Op>
void Reduce(T init, const T* in, int64_t outer, int64_t reduce, int64_t inner, T* out) {
  if (outer == 0 || inner == 0) return;
  if (reduce == 0) {
    std::fill(out, out + outer * inner, init);
  } else if (inner == 1) {
    ReduceRows<T, Op>(init, in, outer, reduce, out);
  } else {
    ReduceColumns<T, Op>(init, in, outer, reduce, inner, out);
  }
}

template <typename T>
void ReduceAny(ReduceFn fn, T init, const T* in, int64_t outer, int64_t reduce, int64_t inner,
               T* out) {
  switch (fn) {
    case ReduceFn::kSum:
      return Reduce<T, SumOp<T>>(init, in, outer, reduce, inner, out);
    case ReduceFn::kMax:
      return Reduce<T, MaxOp<T>>(init, in, outer, reduce, inner, out);
    case ReduceFn::kMin:
      return Reduce<T, MinOp<T>>(init, in, outer, reduce, inner, out);
  }
}

}  // namespace

void ReduceF32(ReduceFn fn, float init, const float* in, int64_t outer, int64_t reduce,
               int64_t inner, float* out) {
  ReduceAny(fn, init, in, outer, reduce, inner, out);
}

void ReduceS32(ReduceFn fn, int32_t init, const int32_t* in, int64_t outer, int64_t reduce,
               int64_t inner, int32_t* out) {
  ReduceAny(fn, init, in, outer, reduce, inner, out);
}

void Reduce16(ReduceFn fn, ir::DType dtype, float init, const void* in, int64_t outer,
              int64_t reduce, int64_t inner, void* out) {
  const int64_t count = outer * reduce * inner;
  float* wide = internal::ThreadF32Scratch(0, count);
  internal::ParallelFor(count, internal::kElementGrain, [&](int64_t begin, int64_t end) {
    internal::Widen16ToF32(dtype, static_cast<const uint16_t*>(in) + begin, wide + begin,
                           end - begin);
  });
  float* result = internal::ThreadF32Scratch(2, outer * inner);
  ReduceAny(fn, init, wide, outer, reduce, inner, result);
  internal::NarrowF32To16(result, dtype, out, outer * inner);
}

}  // namespace alpa::kernels
