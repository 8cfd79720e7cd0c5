// Window ops: convolution, reduce-window, select-and-scatter. Their strategies split only the
// dimensions whose windows never cross a tile (sharding/convolution_strategies.h,
// sharding/reduce_strategies.h): batch, features, and spatial dimensions whose window is
// pointwise; so with the operands in the strategy's layouts the op on the tiles is the tile of
// the result (a partial sum over the axes splitting a convolution's input feature, which the
// strategy's collective completes, as for dot). No halo exchange is ever needed.
//
// One attribute changes: a grouped convolution split along its groups (the depthwise case, where
// the group dimension splits the input feature, or for batch_group_count the input batch) runs
// G / T groups on each of the T tiles:
//   local feature_group_count = G * (local input features) / (input features)
//   local batch_group_count   = G * (local input batch) / (input batch)
// Convolutions of one group, or whose groups stay whole, keep their counts.
#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

// G * local / whole, the groups a tile holds when the dimension of size `whole` is split into
// tiles of `local` along the groups (only divisible splits of G are made).
int64_t LocalGroups(int64_t groups, int64_t local, int64_t whole) {
  return groups == 1 ? 1 : groups * local / whole;
}

}  // namespace

Result<ir::Instruction*> HandleWindow(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  if (original.opcode() != ir::Opcode::kConvolution) return EmitLocal(s, input);
  ir::Attributes attributes = original.attributes();
  if (!attributes.conv_dims.has_value()) {
    return InvalidArgument("%{} (convolution) has no dim_labels", original.name());
  }
  const ir::ConvolutionDimensionNumbers& dims = *attributes.conv_dims;
  const ir::Shape& whole = original.operand(0)->shape();
  const ir::Shape& local = input.operands[0]->shape();
  attributes.feature_group_count = LocalGroups(
      attributes.feature_group_count, local.dim(dims.input_feature), whole.dim(dims.input_feature));
  attributes.batch_group_count = LocalGroups(
      attributes.batch_group_count, local.dim(dims.input_batch), whole.dim(dims.input_batch));
  return EmitLocalWith(s, input, input.operands, std::move(attributes));
}

}  // namespace alpa::spmd
