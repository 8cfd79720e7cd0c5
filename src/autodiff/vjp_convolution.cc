// The rule of convolution (JAX's _conv_general_dilated_transpose_lhs/_rhs). Per spatial dim, with
// input size n, kernel size k, window stride s, padding (lo, hi), window (rhs) dilation r,
// output size m and cotangent g (of the result's shape):
//   k_d = (k - 1) r + 1   (dilated kernel),   m_d = (m - 1) s + 1   (g dilated by the stride)
//
//   d lhs = conv(g, reverse(rhs) over its spatial dims) with
//             lhs_dilate = s, stride = 1, rhs_dilate = r,
//             pad_low = k_d - 1 - lo, pad_high = n + k_d - 1 - m_d - pad_low,
//           the kernel's feature roles swapped (its output features are contracted with g's
//           features, its input features become the result's) and the result laid out as lhs.
//           Output x[i] got g[j] * w[t] for i = j s - lo + t r, so x[i] = sum_j g[j] w[(i + lo -
//           j s) / r]: a full correlation of stride-dilated g with the flipped kernel; pad_high
//           also covers the input elements past the last window (when s does not divide evenly),
//           and may be negative when hi dropped elements the windows never reached.
//   d rhs = conv(lhs, g) with stride = r, rhs_dilate = s, pad_low = lo,
//             pad_high = m_d - n + k_d - lo - 1,
//           lhs's batch and feature roles swapped (batch is contracted with g's batch), g as the
//           kernel (g's batch is its input feature, g's feature its output feature) and the
//           result laid out as rhs (rhs input feature <- lhs feature, output feature <- g's).
//           w[t] = sum_{b,j} x[j s - lo + t r] g[j]; the window over x has size m, dilation s, and
//           steps r per tap t; pad_high makes exactly k taps.
// Not supported (Unimplemented): lhs_dilate != 1 (transposed convolutions), window reversal,
// feature_group_count != 1 and batch_group_count != 1.
#include <fmt/format.h>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

Instruction* ConvertLike(ir::ComputationBuilder& b, Instruction* x, const Instruction* like) {
  if (x != nullptr && x->shape().dtype() != like->shape().dtype()) {
    return b.Convert(x, like->shape().dtype());
  }
  return x;
}

}  // namespace

Result<std::vector<Instruction*>> ConvolutionVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  if (in.forward.opcode() != ir::Opcode::kConvolution) {
    return Unimplemented("no convolution gradient rule for {}",
                         ir::OpcodeName(in.forward.opcode()));
  }
  const ir::Attributes& attributes = in.forward.attributes();
  if (!attributes.conv_dims.has_value()) {
    return InvalidArgument("convolution %{} has no dim_labels", in.forward.name());
  }
  if (attributes.feature_group_count != 1 || attributes.batch_group_count != 1) {
    return Unimplemented(
        "gradient of convolution %{} with feature_group_count={} batch_group_count={}: only 1 "
        "and 1 are supported",
        in.forward.name(), attributes.feature_group_count, attributes.batch_group_count);
  }
  const std::vector<ir::WindowDim>& window = attributes.window;
  for (size_t i = 0; i < window.size(); ++i) {
    if (window[i].lhs_dilation != 1 || window[i].reversal) {
      return Unimplemented(
          "gradient of convolution %{}: spatial dim {} has lhs_dilate={} rhs_reversal={}; only "
          "lhs_dilate=1 without reversal is supported",
          in.forward.name(), i, window[i].lhs_dilation, window[i].reversal ? 1 : 0);
    }
  }
  const ir::ConvolutionDimensionNumbers& dn = *attributes.conv_dims;
  Instruction* lhs = in.operands[0];
  Instruction* rhs = in.operands[1];
  Instruction* g = in.cotangent;
  // The convolution's result type may differ from its operands' (preferred element type): the
  // cotangent is carried in the operands' type.
  g = ConvertLike(b, g, lhs);
  if (g->shape().ElementCount() == 0) {
    // No output element: neither operand reaches the loss.
    return std::vector<Instruction*>{Full(b, lhs, 0), Full(b, rhs, 0)};
  }

  std::vector<ir::WindowDim> lhs_window, rhs_window;
  for (size_t i = 0; i < window.size(); ++i) {
    const ir::WindowDim& w = window[i];
    const int64_t n = lhs->shape().dim(dn.input_spatial[i]);
    const int64_t k = rhs->shape().dim(dn.kernel_spatial[i]);
    const int64_t m = g->shape().dim(dn.output_spatial[i]);
    const int64_t k_dilated = (k - 1) * w.rhs_dilation + 1;
    const int64_t m_dilated = m == 0 ? 0 : (m - 1) * w.stride + 1;
    ir::WindowDim lw;
    lw.size = k;
    lw.stride = 1;
    lw.lhs_dilation = w.stride;
    lw.rhs_dilation = w.rhs_dilation;
    lw.pad_low = k_dilated - 1 - w.pad_low;
    lw.pad_high = n + k_dilated - 1 - m_dilated - lw.pad_low;
    lhs_window.push_back(lw);
    ir::WindowDim rw;
    rw.size = m;
    rw.stride = w.rhs_dilation;
    rw.rhs_dilation = w.stride;
    rw.pad_low = w.pad_low;
    rw.pad_high = m_dilated - n + k_dilated - w.pad_low - 1;
    rhs_window.push_back(rw);
  }

  // d lhs: input g (as the output is laid out), kernel = reversed rhs with features swapped,
  // result laid out as lhs.
  ir::ConvolutionDimensionNumbers lhs_dn;
  lhs_dn.input_batch = dn.output_batch;
  lhs_dn.input_feature = dn.output_feature;
  lhs_dn.input_spatial = dn.output_spatial;
  lhs_dn.kernel_input_feature = dn.kernel_output_feature;
  lhs_dn.kernel_output_feature = dn.kernel_input_feature;
  lhs_dn.kernel_spatial = dn.kernel_spatial;
  lhs_dn.output_batch = dn.input_batch;
  lhs_dn.output_feature = dn.input_feature;
  lhs_dn.output_spatial = dn.input_spatial;
  Instruction* reversed = dn.kernel_spatial.empty() ? rhs : b.Reverse(rhs, dn.kernel_spatial);
  Instruction* d_lhs = b.Convolution(g, reversed, std::move(lhs_window), lhs_dn);

  // d rhs: input lhs with batch and feature swapped, kernel g, result laid out as rhs.
  ir::ConvolutionDimensionNumbers rhs_dn;
  rhs_dn.input_batch = dn.input_feature;
  rhs_dn.input_feature = dn.input_batch;
  rhs_dn.input_spatial = dn.input_spatial;
  rhs_dn.kernel_input_feature = dn.output_batch;
  rhs_dn.kernel_output_feature = dn.output_feature;
  rhs_dn.kernel_spatial = dn.output_spatial;
  rhs_dn.output_batch = dn.kernel_input_feature;
  rhs_dn.output_feature = dn.kernel_output_feature;
  rhs_dn.output_spatial = dn.kernel_spatial;
  Instruction* d_rhs = b.Convolution(lhs, g, std::move(rhs_window), rhs_dn);

  return std::vector<Instruction*>{ConvertLike(b, d_lhs, lhs), ConvertLike(b, d_rhs, rhs)};
}

}  // namespace alpa::autodiff
