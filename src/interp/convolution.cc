// convolution, through kernels::Convolution.
//
// dim_labels say where each logical dim sits in each operand. The input is transposed to
// [N, C_in, spatial...], the kernel to [C_out, C_in / feature_group_count, spatial...], the
// kernel computes [N / batch_group_count, C_out, output spatial...], and that is transposed back
// to the result's labelled layout. Window attributes are per spatial dim, in dim_labels order.
// As for dot, a result element type different from the operands' is applied before computing.
#include "kernels/convolution.h"

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// True when `order` is a permutation of 0..rank-1.
bool IsPermutation(const std::vector<int64_t>& order, int64_t rank) {
  if (static_cast<int64_t>(order.size()) != rank) return false;
  std::vector<bool> seen(order.size(), false);
  for (int64_t d : order) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

}  // namespace

Result<Literal> EvaluateConvolution(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const ir::Attributes& attributes = instruction.attributes();
  if (!attributes.conv_dims.has_value()) {
    return InvalidArgument("convolution has no dim_labels");
  }
  const ir::ConvolutionDimensionNumbers& dn = *attributes.conv_dims;
  const Literal& input = *operands[0];
  const Literal& kernel = *operands[1];
  const ir::Shape& shape = instruction.shape();
  const size_t spatial = dn.input_spatial.size();
  std::vector<int64_t> input_order = {dn.input_batch, dn.input_feature};
  input_order.insert(input_order.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  std::vector<int64_t> kernel_order = {dn.kernel_output_feature, dn.kernel_input_feature};
  kernel_order.insert(kernel_order.end(), dn.kernel_spatial.begin(), dn.kernel_spatial.end());
  std::vector<int64_t> output_order = {dn.output_batch, dn.output_feature};
  output_order.insert(output_order.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  if (!shape.IsArray() || !IsPermutation(input_order, input.shape().rank()) ||
      !IsPermutation(kernel_order, kernel.shape().rank()) ||
      !IsPermutation(output_order, shape.rank()) || attributes.window.size() != spatial) {
    return InvalidArgument(
        "dim_labels and window (of {} spatial dims) do not fit input {}, kernel {} and result {}",
        attributes.window.size(), input.shape().ToString(false), kernel.shape().ToString(false),
        shape.ToString(false));
  }
  // XLA's shape rules, which the kernels layer cannot check: it sees only C_in and derives the
  // kernel's strides from C_in / feature_group_count, and its taps from the kernel dims.
  //   C_in = feature_group_count * kernel input features;  window size = kernel spatial size.
  const int64_t groups = attributes.feature_group_count;
  const int64_t input_features = input.shape().dim(dn.input_feature);
  const int64_t kernel_input_features = kernel.shape().dim(dn.kernel_input_feature);
  if (groups < 1 || input_features % groups != 0 ||
      input_features / groups != kernel_input_features) {
    return InvalidArgument(
        "input has {} features, not feature_group_count {} x kernel input features {}",
        input_features, groups, kernel_input_features);
  }
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kernel_size = kernel.shape().dim(dn.kernel_spatial[i]);
    if (attributes.window[i].size != kernel_size) {
      return InvalidArgument("window size {} of spatial dim {} is not the kernel's {}",
                             attributes.window[i].size, i, kernel_size);
    }
  }
  const ir::DType dtype = shape.dtype();
  Literal in = Permute(input, input_order);
  Literal weights = Permute(kernel, kernel_order);
  if (in.shape().dtype() != dtype) {
    ALPA_ASSIGN_OR_RETURN(in, ConvertLiteral(in, dtype));
  }
  if (weights.shape().dtype() != dtype) {
    ALPA_ASSIGN_OR_RETURN(weights, ConvertLiteral(weights, dtype));
  }
  kernels::ConvolutionParams params;
  params.batch = in.shape().dim(0);
  params.input_features = in.shape().dim(1);
  params.output_features = weights.shape().dim(0);
  params.feature_group_count = attributes.feature_group_count;
  params.batch_group_count = attributes.batch_group_count;
  for (size_t i = 0; i < spatial; ++i) {
    const ir::WindowDim& w = attributes.window[i];
    params.input_spatial.push_back(in.shape().dim(static_cast<int64_t>(2 + i)));
    params.kernel_spatial.push_back(weights.shape().dim(static_cast<int64_t>(2 + i)));
    params.output_spatial.push_back(shape.dim(dn.output_spatial[i]));
    params.strides.push_back(w.stride);
    params.pad_low.push_back(w.pad_low);
    params.pad_high.push_back(w.pad_high);
    params.lhs_dilation.push_back(w.lhs_dilation);
    params.rhs_dilation.push_back(w.rhs_dilation);
    params.window_reversal.push_back(w.reversal);
  }
  // The kernel's canonical result [N / batch_group_count, C_out, output spatial...].
  std::vector<int64_t> canonical_dims = {shape.dim(dn.output_batch), shape.dim(dn.output_feature)};
  for (int64_t d : dn.output_spatial) canonical_dims.push_back(shape.dim(d));
  if (params.batch_group_count < 1 ||
      canonical_dims[0] * params.batch_group_count != params.batch ||
      canonical_dims[1] != params.output_features) {
    return InvalidArgument(
        "result {} does not match batch {} / batch_group_count {} and {} "
        "output features",
        shape.ToString(false), params.batch, params.batch_group_count, params.output_features);
  }
  ALPA_RETURN_IF_ERROR(kernels::ValidateConvolutionParams(params));
  Literal canonical = Literal::CreateZeros(ir::Shape::Array(dtype, canonical_dims));
  if (canonical.element_count() > 0) {
    ALPA_RETURN_IF_ERROR(
        kernels::Convolution(dtype, params, in.data(), weights.data(), canonical.data()));
  }
  // Result dim output_order[j] holds canonical dim j, so result dim d is canonical dim
  // inverse[d].
  std::vector<int64_t> inverse(output_order.size());
  for (size_t j = 0; j < output_order.size(); ++j) {
    inverse[static_cast<size_t>(output_order[j])] = static_cast<int64_t>(j);
  }
  return Permute(canonical, inverse);
}

}  // namespace alpa::interp::internal
