// Reductions of f32 and s32 arrays along one contiguous range of dimensions: the fast path of
// `reduce` with an add, maximum or minimum reducer (the sums of gradients and losses, softmax's
// max, MoE's routing counts). s32 sums wrap around; integer folds are exact in any order.
//
// The input is viewed as [outer, reduce, inner] (row-major; the caller merges the dimensions
// before, inside and after the reduced range), and
//   out[o * inner + i] = fold(init, in[(o * reduce + r) * inner + i] for r = 0 .. reduce - 1)
// with maximum and minimum propagating NaN, as XLA's do.
//
// Order of the fold, which fixes the rounding of sums:
//   inner > 1   r ascending for each (o, i), exactly the reference interpreter's order, vectorised
//               across i;
//   inner == 1  each row folded in 8 interleaved lanes (vector registers) that are then folded
//               pairwise; a row longer than a chunk is folded chunk by chunk in parallel and the
//               chunk results folded in order.
// Neither order depends on the number of threads, so the result is the same bytes with any team.
#ifndef ALPA_KERNELS_REDUCE_H_
#define ALPA_KERNELS_REDUCE_H_

#include <cstdint>

#include "ir/dtype.h"

namespace alpa::kernels {

enum class ReduceFn { kSum, kMax, kMin };

// `in` holds outer * reduce * inner elements, `out` outer * inner; no overlap.
void ReduceF32(ReduceFn fn, float init, const float* in, int64_t outer, int64_t reduce,
               int64_t inner, float* out);
void ReduceS32(ReduceFn fn, int32_t init, const int32_t* in, int64_t outer, int64_t reduce,
               int64_t inner, int32_t* out);

// The same over f16 or bf16 (`dtype`): the input widened to f32, folded as ReduceF32 folds, each
// result rounded once to 16 bits. That is what JAX's own reductions of 16-bit arrays compute
// (they convert to f32 first); an HLO reduce with a 16-bit reducer, run literally as the
// interpreter runs it, rounds after every step instead, so a sum can differ from the
// interpreter's by more than an ulp, the interpreter's the further off. Maximum and minimum are
// exact either way.
void Reduce16(ReduceFn fn, ir::DType dtype, float init, const void* in, int64_t outer,
              int64_t reduce, int64_t inner, void* out);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_REDUCE_H_
