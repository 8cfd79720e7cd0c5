// N-dimensional convolution with XLA semantics on raw row-major buffers: the kernel behind
// `convolution`. The caller transposes operands into the canonical layouts below.
//
// For output position o and kernel position k of one spatial dimension (XLA's
// ConvWithGeneralPadding, lhs = input, rhs = kernel):
//   u = o * stride - pad_low + k * rhs_dilation
//   the input element read is u / lhs_dilation when u % lhs_dilation == 0 and it lies inside the
//   input; otherwise the term is zero (padding, or a hole of the lhs dilation).
//   With window_reversal the kernel element used is K - 1 - k.
// Groups (G = feature_group_count, B = batch_group_count):
//   output feature f uses input features [g * C_in/G, (g + 1) * C_in/G) with g = f / (C_out/G);
//   output batch n of output feature f reads input batch b * (N/B) + n with b = f / (C_out/B),
//   i.e. the input batch is split into B contiguous groups, group b feeding the b-th contiguous
//   block of output features (the split XLA's batch-group converter and JAX's transpose rule use).
//
// Which path each case takes (SelectConvolutionPath):
//   kOneDnn     dtype f32, f16 or bf16 (16-bit types widened to f32 and the result rounded once),
//               1 to 3 spatial dims, every lhs_dilation 1, every pad >= 0, batch_group_count 1,
//               no window reversal, and no zero-sized dimension. oneDNN's dilation is
//               rhs_dilation - 1 and feature groups use the grouped weights layout
//               [G, C_out/G, C_in/G, K...], which is our kernel layout read differently.
//   kReference  everything else: f64, complex and integer dtypes, 0 or more than 3 spatial dims,
//               lhs dilation, negative padding, batch groups, reversal, empty dimensions. An exact
//               direct loop (integers wrap modulo 2^bits). It also runs when oneDNN rejects a
//               problem at primitive creation.
// Threading: see kernels/matmul.h; the same contract holds here.
#ifndef ALPA_KERNELS_CONVOLUTION_H_
#define ALPA_KERNELS_CONVOLUTION_H_

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::kernels {

struct ConvolutionParams {
  int64_t batch, input_features, output_features;   // N, C_in (total), C_out (total)
  std::vector<int64_t> input_spatial;               // input spatial sizes
  std::vector<int64_t> kernel_spatial;              // kernel spatial sizes
  std::vector<int64_t> output_spatial;              // output spatial sizes (computed by caller)
  std::vector<int64_t> strides, pad_low, pad_high;  // pads may be negative
  std::vector<int64_t> lhs_dilation, rhs_dilation;  // >= 1
  std::vector<bool> window_reversal;                // may be empty = none
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
};

enum class ConvolutionPath { kOneDnn, kReference };

// Checks the parameters against XLA's rules: one entry per spatial dim in every vector
// (window_reversal may be empty), sizes >= 0, strides and dilations >= 1, group counts >= 1
// dividing the features and batch as XLA requires, and output_spatial equal to
//   StridedBound(DilatedBound(in, lhs_dilation) + pad_low + pad_high,
//                DilatedBound(kernel, rhs_dilation), stride)
// where DilatedBound(x, d) = x == 0 ? 0 : (x - 1) * d + 1 and
// StridedBound(x, w, s) = w > x ? 0 : (x - w) / s + 1. Violations are InvalidArgument.
Status ValidateConvolutionParams(const ConvolutionParams& params);

// The path Convolution takes for valid parameters (see the table above).
ConvolutionPath SelectConvolutionPath(ir::DType dtype, const ConvolutionParams& params);

// Input [N, C_in, spatial...], kernel [C_out, C_in / feature_group_count, kernel spatial...],
// output [N / batch_group_count, C_out, output spatial...], row-major. Any number of spatial dims.
// Supported dtypes: f16, bf16, f32, f64, c64, c128, s8..s64, u8..u64; others are Unimplemented.
Status Convolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                   const void* kernel, void* output);

// The exact direct loop alone, whatever SelectConvolutionPath says; for tests and benchmarks
// that compare the two paths. Same contract as Convolution.
Status ReferenceConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                            const void* kernel, void* output);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_CONVOLUTION_H_
