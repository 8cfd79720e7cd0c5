#include "kernels/reduce.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

// Each op: its identity and its combine step (maximum and minimum propagate NaN: once either
// side is NaN the result is).
struct SumOp {
  static constexpr float kIdentity = 0.0f;
  static float Apply(float a, float b) { return a + b; }
};
struct MaxOp {
  static constexpr float kIdentity = -std::numeric_limits<float>::infinity();
  static float Apply(float a, float b) { return a > b || a != a ? a : b; }
};
struct MinOp {
  static constexpr float kIdentity = std::numeric_limits<float>::infinity();
  static float Apply(float a, float b) { return a < b || a != a ? a : b; }
};

// Columns of `in` folded in lanes of kLanes (which the compiler maps to vector registers), the
// lanes then folded in a fixed tree: the order depends on n only, not on alignment or threads.
constexpr int kLanes = 8;

template <typename Op>
float FoldRow(const float* row, int64_t n) {
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, Op::kIdentity);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = Op::Apply(lanes[j], row[i + j]);
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lanes[j] = Op::Apply(lanes[j], lanes[j + width]);
  }
  float result = lanes[0];
  for (; i < n; ++i) result = Op::Apply(result, row[i]);
  return result;
}

template <typename Op>
void ReduceRows(float init, const float* in, int64_t outer, int64_t reduce, float* out) {
  if (outer == 1 && reduce > internal::kElementGrain) {
    // One long row: chunk partials in parallel, added in chunk order.
    const int64_t grain = internal::kElementGrain;
    std::vector<float> partial(static_cast<size_t>(internal::ChunkCount(reduce, grain)));
    internal::ParallelFor(static_cast<int64_t>(partial.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        partial[static_cast<size_t>(c)] =
            FoldRow<Op>(in + c * grain, std::min(grain, reduce - c * grain));
      }
    });
    float acc = init;
    for (float p : partial) acc = Op::Apply(acc, p);
    out[0] = acc;
    return;
  }
  const int64_t rows_per_chunk = std::max<int64_t>(1, internal::kElementGrain / reduce);
  internal::ParallelFor(outer, rows_per_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      out[o] = Op::Apply(init, FoldRow<Op>(in + o * reduce, reduce));
  });
}

// inner > 1: each output column block starts at init and folds in the rows in order.
template <typename Op>
void ReduceColumns(float init, const float* in, int64_t outer, int64_t reduce, int64_t inner,
                   float* out) {
  constexpr int64_t kBlock = 2048;  // output floats kept hot in L1 while the rows stream by
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t tasks_per_chunk =
      std::max<int64_t>(1, internal::kElementGrain / (reduce * std::min(inner, kBlock)));
  internal::ParallelFor(outer * blocks, tasks_per_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks;
      const int64_t first = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, inner - first);
      float* acc = out + o * inner + first;
      std::fill(acc, acc + width, init);
      for (int64_t r = 0; r < reduce; ++r) {
        const float* row = in + (o * reduce + r) * inner + first;
        for (int64_t i = 0; i < width; ++i) acc[i] = Op::Apply(acc[i], row[i]);
      }
    }
  });
}

template <typename Op>
void Reduce(float init, const float* in, int64_t outer, int64_t reduce, int64_t inner, float* out) {
  if (outer == 0 || inner == 0) return;
  if (reduce == 0) {
    std::fill(out, out + outer * inner, init);
  } else if (inner == 1) {
    ReduceRows<Op>(init, in, outer, reduce, out);
  } else {
    ReduceColumns<Op>(init, in, outer, reduce, inner, out);
  }
}

}  // namespace

void ReduceF32(ReduceFn fn, float init, const float* in, int64_t outer, int64_t reduce,
               int64_t inner, float* out) {
  switch (fn) {
    case ReduceFn::kSum:
      return Reduce<SumOp>(init, in, outer, reduce, inner, out);
    case ReduceFn::kMax:
      return Reduce<MaxOp>(init, in, outer, reduce, inner, out);
    case ReduceFn::kMin:
      return Reduce<MinOp>(init, in, outer, reduce, inner, out);
  }
}

}  // namespace alpa::kernels
