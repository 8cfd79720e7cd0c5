// Internal to the kernels layer: the oneDNN engine, per-thread streams and the primitive cache,
// and the matmul and convolution primitives built on them, in f32, f16 or bf16.
//
// Each function returns OK when oneDNN ran the problem, Unimplemented when oneDNN rejected it at
// primitive creation (the caller then widens to f32 or runs its exact loop), and Internal if
// oneDNN failed at run time. A rejection is cached too, so a rejected problem costs one creation
// attempt per process. Whether oneDNN takes f16 or bf16 depends on the CPU: bf16 needs
// AVX512-BF16 or AMX, f16 AVX512-FP16 or AMX-FP16. Its 16-bit kernels multiply exactly and
// accumulate in f32, rounding the result once, as the widened path does; the order of the f32 sum
// differs, and AVX512-BF16's dot product takes subnormal inputs (below 2^-126) as zero.
#ifndef ALPA_KERNELS_ONEDNN_H_
#define ALPA_KERNELS_ONEDNN_H_

#include <cstdint>

#include "ir/dtype.h"
#include "kernels/convolution.h"
#include "kernels/matmul.h"
#include "support/status.h"

namespace alpa::kernels::internal {

// C[b] = A[b] * B[b] in `dtype`, A and B laid out as `a_layout` and `b_layout` say (matmul.h), C
// row-major; all sizes > 0.
Status OneDnnMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                    const void* b, void* c, MatrixLayout a_layout = MatrixLayout::kRowMajor,
                    MatrixLayout b_layout = MatrixLayout::kRowMajor);

// Forward convolution in `dtype`; `params` must be valid and SelectConvolutionPath must say
// kOneDnn.
Status OneDnnConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                         const void* kernel, void* output);

// Number of primitives (and rejections) cached so far; tests use it to check that repeated calls
// of one shape do not create new primitives.
int64_t OneDnnCacheSize();

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_ONEDNN_H_
