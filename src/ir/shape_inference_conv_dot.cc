// Shape rules of dot and convolution. Both take the result element type from the declared shape
// (XLA's preferred_element_type: bf16 x bf16 -> f32 is common), and require equal operand types.
#include "ir/dot_dimensions.h"
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The declared element type when the declared shape is an array, else the operands'.
DType ResultDType(const Instruction& instruction) {
  const Shape& declared = instruction.shape();
  return declared.IsArray() ? declared.dtype() : OperandShape(instruction, 0).dtype();
}

Status CheckBinaryArrayOperands(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  if (lhs.dtype() != rhs.dtype()) {
    return RuleError(instruction, "lhs {} and rhs {} must have the same element type", Str(lhs),
                     Str(rhs));
  }
  return Status::Ok();
}

// The batch and contracting lists of one side are in range and disjoint.
Status CheckDotSide(const Instruction& instruction, std::string_view side,
                    const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting,
                    int64_t rank) {
  std::vector<int64_t> all = batch;
  all.insert(all.end(), contracting.begin(), contracting.end());
  return CheckDimensionList(instruction, fmt::format("{} batch and contracting dimensions", side),
                            all, rank);
}

// Matching sizes of paired dimensions (batch with batch, contracting with contracting).
Status CheckPairedSizes(const Instruction& instruction, std::string_view kind,
                        const std::vector<int64_t>& lhs_dims,
                        const std::vector<int64_t>& rhs_dims) {
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  if (lhs_dims.size() != rhs_dims.size()) {
    return RuleError(instruction, "lhs has {} {} dimension(s) but rhs has {}", lhs_dims.size(),
                     kind, rhs_dims.size());
  }
  for (size_t i = 0; i < lhs_dims.size(); ++i) {
    if (lhs.dim(lhs_dims[i]) != rhs.dim(rhs_dims[i])) {
      return RuleError(instruction,
                       "lhs {} dimension {} has size {} but rhs {} dimension {} has size {}", kind,
                       lhs_dims[i], lhs.dim(lhs_dims[i]), kind, rhs_dims[i], rhs.dim(rhs_dims[i]));
    }
  }
  return Status::Ok();
}

// A permutation check for one operand's convolution dimension numbers.
Status CheckConvLabels(const Instruction& instruction, std::string_view what, int64_t a, int64_t b,
                       const std::vector<int64_t>& spatial, int64_t rank) {
  std::vector<int64_t> all = {a, b};
  all.insert(all.end(), spatial.begin(), spatial.end());
  if (static_cast<int64_t>(all.size()) != rank) {
    return RuleError(instruction, "{} dim_labels name {} dimension(s) but the rank is {}", what,
                     all.size(), rank);
  }
  return CheckDimensionList(instruction, fmt::format("{} dim_labels", what), all, rank);
}

}  // namespace

// dot: result = batch dims (lhs order), then lhs free dims, then rhs free dims, each in order.
Result<Shape> InferDotShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckBinaryArrayOperands(instruction));
  const std::optional<DotDimensionNumbers>& numbers = instruction.attributes().dot_dims;
  if (!numbers.has_value()) return RuleError(instruction, "has no dot dimension numbers");
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  ALPA_RETURN_IF_ERROR(CheckDotSide(instruction, "lhs", numbers->lhs_batch_dims,
                                    numbers->lhs_contracting_dims, lhs.rank()));
  ALPA_RETURN_IF_ERROR(CheckDotSide(instruction, "rhs", numbers->rhs_batch_dims,
                                    numbers->rhs_contracting_dims, rhs.rank()));
  ALPA_RETURN_IF_ERROR(
      CheckPairedSizes(instruction, "batch", numbers->lhs_batch_dims, numbers->rhs_batch_dims));
  ALPA_RETURN_IF_ERROR(CheckPairedSizes(instruction, "contracting", numbers->lhs_contracting_dims,
                                        numbers->rhs_contracting_dims));
  std::vector<int64_t> dims;
  for (int64_t d : numbers->lhs_batch_dims) dims.push_back(lhs.dim(d));
  for (int64_t d :
       DotFreeDims(lhs.rank(), numbers->lhs_batch_dims, numbers->lhs_contracting_dims)) {
    dims.push_back(lhs.dim(d));
  }
  for (int64_t d :
       DotFreeDims(rhs.rank(), numbers->rhs_batch_dims, numbers->rhs_contracting_dims)) {
    dims.push_back(rhs.dim(d));
  }
  return Shape::Array(ResultDType(instruction), std::move(dims));
}

// convolution, following XLA's InferConvolveShape. With F = feature_group_count and
// B = batch_group_count (at most one of them > 1):
//   input_features = F * kernel_input_features,   kernel_output_features % F == 0,
//   input_batch % B == 0,                          kernel_output_features % B == 0,
//   output batch = input_batch / B,  output feature = kernel_output_features,
//   output spatial i = WindowOutputDims(input spatial i) (stride, padding, both dilations).
Result<Shape> InferConvolutionShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckBinaryArrayOperands(instruction));
  const Attributes& attributes = instruction.attributes();
  if (!attributes.conv_dims.has_value()) return RuleError(instruction, "has no dim_labels");
  const ConvolutionDimensionNumbers& dn = *attributes.conv_dims;
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  const int64_t rank = static_cast<int64_t>(dn.input_spatial.size()) + 2;
  if (dn.kernel_spatial.size() != dn.input_spatial.size() ||
      dn.output_spatial.size() != dn.input_spatial.size()) {
    return RuleError(instruction, "dim_labels must name the same number of spatial dimensions");
  }
  if (lhs.rank() != rank || rhs.rank() != rank) {
    return RuleError(instruction, "lhs {} and rhs {} must have rank {} (dim_labels)", Str(lhs),
                     Str(rhs), rank);
  }
  ALPA_RETURN_IF_ERROR(CheckConvLabels(instruction, "input", dn.input_batch, dn.input_feature,
                                       dn.input_spatial, rank));
  ALPA_RETURN_IF_ERROR(CheckConvLabels(instruction, "kernel", dn.kernel_input_feature,
                                       dn.kernel_output_feature, dn.kernel_spatial, rank));
  ALPA_RETURN_IF_ERROR(CheckConvLabels(instruction, "output", dn.output_batch, dn.output_feature,
                                       dn.output_spatial, rank));
  const int64_t groups = attributes.feature_group_count;
  const int64_t batch_groups = attributes.batch_group_count;
  if (groups < 1 || batch_groups < 1 || (groups > 1 && batch_groups > 1)) {
    return RuleError(instruction,
                     "feature_group_count {} and batch_group_count {} must be >= 1, and at most "
                     "one of them > 1",
                     groups, batch_groups);
  }
  const int64_t input_batch = lhs.dim(dn.input_batch);
  const int64_t input_features = lhs.dim(dn.input_feature);
  const int64_t kernel_input_features = rhs.dim(dn.kernel_input_feature);
  const int64_t kernel_output_features = rhs.dim(dn.kernel_output_feature);
  if (input_features != groups * kernel_input_features) {
    return RuleError(instruction,
                     "input feature dimension has size {} but must be feature_group_count {} x "
                     "kernel input features {}",
                     input_features, groups, kernel_input_features);
  }
  if (kernel_output_features % groups != 0) {
    return RuleError(instruction,
                     "kernel output features {} are not divisible by feature_group_count {}",
                     kernel_output_features, groups);
  }
  if (input_batch % batch_groups != 0 || kernel_output_features % batch_groups != 0) {
    return RuleError(instruction,
                     "input batch {} and kernel output features {} must be divisible by "
                     "batch_group_count {}",
                     input_batch, kernel_output_features, batch_groups);
  }
  std::vector<int64_t> input_spatial;
  for (size_t i = 0; i < dn.input_spatial.size(); ++i) {
    const WindowDim* w = i < attributes.window.size() ? &attributes.window[i] : nullptr;
    const int64_t kernel_size = rhs.dim(dn.kernel_spatial[i]);
    if (w != nullptr && w->size != kernel_size) {
      return RuleError(instruction,
                       "window size {} of spatial dimension {} must equal the kernel's {}", w->size,
                       i, kernel_size);
    }
    input_spatial.push_back(lhs.dim(dn.input_spatial[i]));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> output_spatial,
                        WindowOutputDims(instruction, input_spatial));
  std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
  dims[static_cast<size_t>(dn.output_batch)] = input_batch / batch_groups;
  dims[static_cast<size_t>(dn.output_feature)] = kernel_output_features;
  for (size_t i = 0; i < output_spatial.size(); ++i) {
    dims[static_cast<size_t>(dn.output_spatial[i])] = output_spatial[i];
  }
  return Shape::Array(ResultDType(instruction), std::move(dims));
}

}  // namespace alpa::ir::shape_inference_internal
