// Batched matrix multiplication on raw row-major buffers: the kernel behind `dot`.
//
// The interpreter transposes dot operands into the canonical layout below and calls BatchMatMul;
// the runtime passes an operand whose matrices are stored transposed as it is (MatrixLayout), the
// kernels reading it through strides. Kernels know nothing of instructions or shapes beyond these
// sizes.
//
// Which path each dtype takes:
//   f32          oneDNN matmul primitive (batched), created once per (batch, m, k, n) and cached.
//   f16, bf16    inputs widened to f32, oneDNN f32 matmul, result rounded to 16 bits once (the
//                f32 accumulation XLA's CPU backend uses for these types).
//   f64, c64, c128
//                Eigen matrix products per batch (accumulation in the element type).
//   s8..s64, u8..u64
//                exact loop in unsigned arithmetic, so overflow wraps modulo 2^bits as in XLA.
//   anything else (pred, f8*, s4/u4, token, opaque): Unimplemented naming the dtype.
// If oneDNN rejects an f32 problem the exact loop runs instead, so a result is always produced.
//
// Threading contract: BatchMatMul and Convolution may be called concurrently from any number of
// threads. The primitive cache is guarded by a mutex (a primitive is JIT-compiled once, by the
// first caller that needs it, and never per call), each calling thread owns its own oneDNN stream
// and scratchpad, and primitives themselves are immutable. oneDNN here is built on OpenMP: each
// call uses the calling thread's OpenMP team (omp_get_max_threads()), so a caller running N
// kernels at once should give each thread about cores/N OpenMP threads (omp_set_num_threads) to
// avoid oversubscription. For a fixed thread count and machine, results are reproducible run to
// run.
#ifndef ALPA_KERNELS_MATMUL_H_
#define ALPA_KERNELS_MATMUL_H_

#include <cstdint>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::kernels {

// How an operand's matrices lie in memory: row-major as the product reads them (A[b] m x k, B[b]
// k x n), or each stored transposed (A[b] k x m, B[b] n x k), batch after batch either way. A
// backward pass's dots read one operand transposed (dW = X^T dY, dX = dY W^T): oneDNN reads it in
// place through strides, where a copy would cost a pass over it (the attention's probabilities
// alone are 64 MiB a layer in the large GPT benchmark).
enum class MatrixLayout { kRowMajor, kTransposed };

// C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for b < batch; A and B laid out as `a_layout` and
// `b_layout` say, C row-major, all three contiguous. k == 0 writes zeros; m == 0, n == 0 or batch
// == 0 writes nothing. Negative sizes, null buffers with a non-zero element count, or an element
// count that overflows int64 are InvalidArgument. `c` must not alias `a` or `b`.
Status BatchMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                   const void* b, void* c, MatrixLayout a_layout = MatrixLayout::kRowMajor,
                   MatrixLayout b_layout = MatrixLayout::kRowMajor);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_MATMUL_H_
