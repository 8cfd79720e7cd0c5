#include "sharding/convolution_strategies.h"

#include <vector>

#include "sharding/dot_strategies.h"

namespace alpa::sharding {
namespace {

// Size 1, stride 1, no padding, no dilation: output position p reads input position p only.
bool IsPointwise(const ir::WindowDim& window) {
  return window.size == 1 && window.stride == 1 && window.pad_low == 0 && window.pad_high == 0 &&
         window.lhs_dilation == 1 && window.rhs_dilation == 1;
}

}  // namespace

Result<StrategySet> ConvolutionStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx) {
  const ir::Attributes& attributes = instruction.attributes();
  if (instruction.opcode() != ir::Opcode::kConvolution || !attributes.conv_dims ||
      instruction.operand_count() != 2 ||
      attributes.window.size() != attributes.conv_dims->input_spatial.size()) {
    return Unimplemented(
        "convolution strategies: %{} ({}) is not a convolution with dim_labels and a window of "
        "one entry per spatial dimension",
        instruction.name(), ir::OpcodeName(instruction.opcode()));
  }
  const ir::ConvolutionDimensionNumbers& numbers = *attributes.conv_dims;
  const ir::Shape& input = instruction.operand(0)->shape();
  const int64_t feature_groups = attributes.feature_group_count;
  const int64_t batch_groups = attributes.batch_group_count;
  const int64_t in_features = input.dim(numbers.input_feature);
  const int64_t out_features = instruction.shape().dim(numbers.output_feature);
  const bool grouped = feature_groups > 1 && feature_groups != in_features;

  // In the order b, i, j, k (ContractionStrategies' naming order).
  std::vector<ContractionDim> dims;
  if (feature_groups > 1 && feature_groups == in_features) {  // depthwise
    dims.push_back({feature_groups, numbers.output_feature, numbers.input_feature,
                    numbers.kernel_output_feature});
  }
  if (batch_groups > 1 && batch_groups == out_features) {  // depthwise filter gradient
    dims.push_back(
        {batch_groups, numbers.output_feature, numbers.input_batch, numbers.kernel_output_feature});
  }
  if (batch_groups == 1) {
    dims.push_back({input.dim(numbers.input_batch), numbers.output_batch, numbers.input_batch, -1});
  }
  if (!grouped) {
    for (size_t s = 0; s < numbers.input_spatial.size(); ++s) {
      if (!IsPointwise(attributes.window[s])) continue;
      dims.push_back({input.dim(numbers.input_spatial[s]), numbers.output_spatial[s],
                      numbers.input_spatial[s], -1});
    }
  }
  if (feature_groups == 1 && batch_groups == 1) {
    dims.push_back({out_features, numbers.output_feature, -1, numbers.kernel_output_feature});
  }
  if (feature_groups == 1) {
    dims.push_back({in_features, -1, numbers.input_feature, numbers.kernel_input_feature});
  }
  return ContractionStrategies(instruction, ctx, dims);
}

}  // namespace alpa::sharding
