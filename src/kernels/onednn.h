// Internal to the kernels layer: the oneDNN engine, per-thread streams and the primitive cache,
// and the two f32 primitives built on them.
//
// Each function returns OK when oneDNN ran the problem, Unimplemented when oneDNN rejected it at
// primitive creation (the caller then runs its exact loop), and Internal if oneDNN failed at run
// time. A rejection is cached too, so a rejected shape costs one creation attempt per process.
#ifndef ALPA_KERNELS_ONEDNN_H_
#define ALPA_KERNELS_ONEDNN_H_

#include <cstdint>

#include "kernels/convolution.h"
#include "support/status.h"

namespace alpa::kernels::internal {

// C[b] = A[b] * B[b]; all sizes > 0.
Status OneDnnMatMulF32(int64_t batch, int64_t m, int64_t k, int64_t n, const float* a,
                       const float* b, float* c);

// Forward convolution; `params` must be valid and SelectConvolutionPath must say kOneDnn.
Status OneDnnConvolutionF32(const ConvolutionParams& params, const float* input,
                            const float* kernel, float* output);

// Number of primitives (and rejections) cached so far; tests use it to check that repeated calls
// of one shape do not create new primitives.
int64_t OneDnnCacheSize();

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_ONEDNN_H_
