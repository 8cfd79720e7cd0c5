#include "kernels/convolution.h"

#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/element_type.h"
#include "kernels/onednn.h"
#include "kernels/reference_convolution.h"

namespace alpa::kernels {
namespace {

bool CheckedMul(int64_t x, int64_t y, int64_t* result) {
  return !__builtin_mul_overflow(x, y, result);
}
bool CheckedAdd(int64_t x, int64_t y, int64_t* result) {
  return !__builtin_add_overflow(x, y, result);
}

// Element counts of input, kernel and output; false on int64 overflow.
struct Counts {
  int64_t input = 0, kernel = 0, output = 0;
};
bool ComputeCounts(const ConvolutionParams& p, Counts* counts) {
  int64_t input = 0, kernel = 0, output = 0;
  if (!CheckedMul(p.batch, p.input_features, &input) ||
      !CheckedMul(p.output_features, p.input_features / p.feature_group_count, &kernel) ||
      !CheckedMul(p.batch / p.batch_group_count, p.output_features, &output)) {
    return false;
  }
  for (size_t d = 0; d < p.input_spatial.size(); ++d) {
    if (!CheckedMul(input, p.input_spatial[d], &input) ||
        !CheckedMul(kernel, p.kernel_spatial[d], &kernel) ||
        !CheckedMul(output, p.output_spatial[d], &output)) {
      return false;
    }
  }
  // Byte sizes of the widest element (16 bytes) must be addressable too.
  int64_t bytes = 0;
  if (!CheckedMul(std::max({input, kernel, output}), 16, &bytes)) return false;
  *counts = {input, kernel, output};
  return true;
}

// (size - 1) * dilation + 1, or 0 for size 0 (XLA's window_util::DilatedBound).
bool DilatedBound(int64_t size, int64_t dilation, int64_t* bound) {
  if (size == 0) {
    *bound = 0;
    return true;
  }
  return CheckedMul(size - 1, dilation, bound) && CheckedAdd(*bound, 1, bound);
}

Status ValidateSpatialDim(const ConvolutionParams& p, size_t d) {
  if (p.input_spatial[d] < 0 || p.kernel_spatial[d] < 0 || p.output_spatial[d] < 0) {
    return InvalidArgument("convolution: negative spatial size in dimension {}", d);
  }
  if (p.strides[d] < 1 || p.lhs_dilation[d] < 1 || p.rhs_dilation[d] < 1) {
    return InvalidArgument(
        "convolution: spatial dimension {} has stride {}, lhs dilation {}, rhs dilation {}; all "
        "must be >= 1",
        d, p.strides[d], p.lhs_dilation[d], p.rhs_dilation[d]);
  }
  int64_t padded = 0, window = 0;
  if (!DilatedBound(p.input_spatial[d], p.lhs_dilation[d], &padded) ||
      !CheckedAdd(padded, p.pad_low[d], &padded) || !CheckedAdd(padded, p.pad_high[d], &padded) ||
      !DilatedBound(p.kernel_spatial[d], p.rhs_dilation[d], &window)) {
    return InvalidArgument("convolution: spatial dimension {} overflows int64", d);
  }
  if (padded < 0) {
    return InvalidArgument(
        "convolution: spatial dimension {} has negative size {} after padding {}/{}; reduce the "
        "negative padding",
        d, padded, p.pad_low[d], p.pad_high[d]);
  }
  // XLA's window_util::StridedBound.
  const int64_t expected = window > padded ? 0 : (padded - window) / p.strides[d] + 1;
  if (p.output_spatial[d] != expected) {
    return InvalidArgument(
        "convolution: output spatial dimension {} has size {} but the window gives {} "
        "(input {}, kernel {}, stride {}, padding {}/{}, dilations {}/{})",
        d, p.output_spatial[d], expected, p.input_spatial[d], p.kernel_spatial[d], p.strides[d],
        p.pad_low[d], p.pad_high[d], p.lhs_dilation[d], p.rhs_dilation[d]);
  }
  return Status::Ok();
}

// Checks the parameters and that no non-empty buffer is null.
Status ValidateCall(const ConvolutionParams& params, const void* input, const void* kernel,
                    const void* output, Counts* counts) {
  ALPA_RETURN_IF_ERROR(ValidateConvolutionParams(params));
  if (!ComputeCounts(params, counts)) {
    return InvalidArgument("convolution: element counts overflow int64");
  }
  if ((counts->input > 0 && input == nullptr) || (counts->kernel > 0 && kernel == nullptr) ||
      (counts->output > 0 && output == nullptr)) {
    return InvalidArgument("convolution: null buffer for a non-empty operand");
  }
  return Status::Ok();
}

// f32 through oneDNN, or the direct loop where oneDNN rejects the problem.
Status F32Convolution(const ConvolutionParams& params, const float* input, const float* kernel,
                      float* output) {
  Status status = internal::OneDnnConvolution(ir::DType::kF32, params, input, kernel, output);
  if (status.code() == StatusCode::kUnimplemented) {
    return internal::DirectConvolution(ir::DType::kF32, params, input, kernel, output);
  }
  return status;
}

// f16/bf16 through oneDNN's 16-bit kernel where this CPU has one; elsewhere widened to f32 in
// per-thread scratch and rounded once.
template <typename T>
Status HalfConvolution(ir::DType dtype, const ConvolutionParams& params, const Counts& counts,
                       const void* input, const void* kernel, void* output) {
  Status status = internal::OneDnnConvolution(dtype, params, input, kernel, output);
  if (status.code() != StatusCode::kUnimplemented) return status;
  return internal::RunWidenedToF32<T>(
      input, counts.input, kernel, counts.kernel, output, counts.output,
      [&](const float* input32, const float* kernel32, float* output32) {
        return F32Convolution(params, input32, kernel32, output32);
      });
}

}  // namespace

Status ValidateConvolutionParams(const ConvolutionParams& p) {
  const size_t rank = p.input_spatial.size();
  const std::pair<const char*, size_t> per_dim[] = {{"kernel_spatial", p.kernel_spatial.size()},
                                                    {"output_spatial", p.output_spatial.size()},
                                                    {"strides", p.strides.size()},
                                                    {"pad_low", p.pad_low.size()},
                                                    {"pad_high", p.pad_high.size()},
                                                    {"lhs_dilation", p.lhs_dilation.size()},
                                                    {"rhs_dilation", p.rhs_dilation.size()}};
  for (const auto& [name, size] : per_dim) {
    if (size != rank) {
      return InvalidArgument("convolution: {} has {} entries but there are {} spatial dimensions",
                             name, size, rank);
    }
  }
  if (!p.window_reversal.empty() && p.window_reversal.size() != rank) {
    return InvalidArgument(
        "convolution: window_reversal has {} entries but there are {} spatial dimensions",
        p.window_reversal.size(), rank);
  }
  if (p.batch < 0 || p.input_features < 0 || p.output_features < 0) {
    return InvalidArgument(
        "convolution: negative batch {}, input features {} or output features {}", p.batch,
        p.input_features, p.output_features);
  }
  const int64_t groups = p.feature_group_count, batch_groups = p.batch_group_count;
  if (groups < 1 || batch_groups < 1) {
    return InvalidArgument(
        "convolution: feature_group_count {} and batch_group_count {} must be >= 1", groups,
        batch_groups);
  }
  if (groups > 1 && batch_groups > 1) {
    return InvalidArgument(
        "convolution: feature_group_count {} and batch_group_count {} cannot both exceed 1", groups,
        batch_groups);
  }
  if (p.input_features % groups != 0 || p.output_features % groups != 0) {
    return InvalidArgument(
        "convolution: input features {} and output features {} must be multiples of "
        "feature_group_count {}",
        p.input_features, p.output_features, groups);
  }
  if (p.batch % batch_groups != 0 || p.output_features % batch_groups != 0) {
    return InvalidArgument(
        "convolution: batch {} and output features {} must be multiples of batch_group_count {}",
        p.batch, p.output_features, batch_groups);
  }
  for (size_t d = 0; d < rank; ++d) ALPA_RETURN_IF_ERROR(ValidateSpatialDim(p, d));
  return Status::Ok();
}

ConvolutionPath SelectConvolutionPath(ir::DType dtype, const ConvolutionParams& p) {
  const bool float_type =
      dtype == ir::DType::kF32 || dtype == ir::DType::kF16 || dtype == ir::DType::kBF16;
  const size_t rank = p.input_spatial.size();
  if (!float_type || rank < 1 || rank > 3 || p.batch_group_count != 1) {
    return ConvolutionPath::kReference;
  }
  if (p.batch == 0 || p.input_features == 0 || p.output_features == 0) {
    return ConvolutionPath::kReference;
  }
  for (size_t d = 0; d < rank; ++d) {
    const bool reversed = !p.window_reversal.empty() && p.window_reversal[d];
    if (reversed || p.lhs_dilation[d] != 1 || p.pad_low[d] < 0 || p.pad_high[d] < 0 ||
        p.input_spatial[d] == 0 || p.kernel_spatial[d] == 0 || p.output_spatial[d] == 0) {
      return ConvolutionPath::kReference;
    }
  }
  return ConvolutionPath::kOneDnn;
}

Status Convolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                   const void* kernel, void* output) {
  Counts counts;
  ALPA_RETURN_IF_ERROR(ValidateCall(params, input, kernel, output, &counts));
  if (SelectConvolutionPath(dtype, params) == ConvolutionPath::kReference) {
    return internal::DirectConvolution(dtype, params, input, kernel, output);
  }
  switch (dtype) {
    case ir::DType::kF32:
      return F32Convolution(params, static_cast<const float*>(input),
                            static_cast<const float*>(kernel), static_cast<float*>(output));
    case ir::DType::kF16:
      return HalfConvolution<Eigen::half>(dtype, params, counts, input, kernel, output);
    case ir::DType::kBF16:
      return HalfConvolution<Eigen::bfloat16>(dtype, params, counts, input, kernel, output);
    default:
      return Internal("convolution: no oneDNN path for {}", ir::DTypeName(dtype));
  }
}

Status ReferenceConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                            const void* kernel, void* output) {
  Counts counts;
  ALPA_RETURN_IF_ERROR(ValidateCall(params, input, kernel, output, &counts));
  return internal::DirectConvolution(dtype, params, input, kernel, output);
}

}  // namespace alpa::kernels
