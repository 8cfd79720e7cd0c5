// Ops that cut, pad or paste along some dimensions: slice, pad, concatenate, dynamic-slice and
// dynamic-update-slice. Their strategies (sharding/slice_strategies.h) split only dimensions the
// op leaves whole: a slice's [0:n:1], an unpadded dimension, a dimension other than the
// concatenated one, a dynamic slice or update that covers the whole dimension (its start clamps to
// 0 globally, and to 0 on the tile too). On such a dimension the op on the tile is the tile of the
// result, once a slice's limit or a dynamic slice's size is the tile's extent. A split dimension
// the op does change (a layout imported from elsewhere) is refused, naming it.
#include <fmt/format.h>

#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

Status Refuse(const ir::Instruction& op, int64_t dim, const char* why) {
  return Unimplemented(
      "%{} ({}): dimension {} is split, but {}; the partitioner handles only "
      "splits of dimensions the op leaves whole",
      op.name(), ir::OpcodeName(op.opcode()), dim, why);
}

}  // namespace

Result<ir::Instruction*> HandleSlice(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& op = input.original;
  const sharding::ShardingSpec& out = input.output[0];
  ir::Attributes attributes = op.attributes();
  for (int64_t d = 0; d < op.shape().rank(); ++d) {
    if (out.dim_axes[static_cast<size_t>(d)].empty()) continue;
    const auto u = static_cast<size_t>(d);
    const int64_t whole = op.operand(0)->shape().dim(d);
    const int64_t local = input.local_shape.dim(d);
    switch (op.opcode()) {
      case ir::Opcode::kSlice: {
        const ir::SliceDim& slice = attributes.slice[u];
        if (slice.start != 0 || slice.limit != whole || slice.stride != 1) {
          return Refuse(op, d, "the slice takes part of it");
        }
        attributes.slice[u].limit = local;
        break;
      }
      case ir::Opcode::kPad:
        if (attributes.padding[u] != ir::PaddingDim{}) return Refuse(op, d, "it is padded");
        break;
      case ir::Opcode::kConcatenate:
        if (attributes.dimensions.at(0) == d) return Refuse(op, d, "it is concatenated");
        break;
      case ir::Opcode::kDynamicSlice:
        if (attributes.slice_sizes[u] != whole) return Refuse(op, d, "the slice takes part of it");
        attributes.slice_sizes[u] = local;
        break;
      case ir::Opcode::kDynamicUpdateSlice:
        if (op.operand(1)->shape().dim(d) != whole) {
          return Refuse(op, d, "the update covers part of it");
        }
        break;
      default:
        return Internal("%{}: {} is not a slice op", op.name(), ir::OpcodeName(op.opcode()));
    }
  }
  return EmitLocalWith(s, input, input.operands, std::move(attributes));
}

}  // namespace alpa::spmd
