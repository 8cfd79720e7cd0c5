// Sources: a parameter is fed its tile (local shape); a constant is sliced to the tile when it is
// split; an iota computes its tile's values:
//   local_iota[i] = iota[offset + i] = i + offset,  offset = IndexOverAxes(device, A) * local n
// along the iota dimension split over axes A (other split dimensions do not change the values).
#include <fmt/format.h>

#include "spmd/handlers.h"
#include "spmd/reshard.h"

namespace alpa::spmd {

Result<ir::Instruction*> HandleSource(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  switch (original.opcode()) {
    case ir::Opcode::kParameter:
      return EmitLocal(s, input);
    case ir::Opcode::kConstant: {
      const sharding::ShardingSpec& spec = input.output[0];
      if (spec.IsFullyReplicated()) return EmitLocal(s, input);
      ir::Instruction* whole = s.b().Constant(*original.attributes().literal);
      return EmitReshard(s, whole, sharding::ShardingSpec::Replicated(original.shape().rank()),
                         spec, original.shape(), fmt::format("%{}", original.name()));
    }
    case ir::Opcode::kIota: {
      ALPA_ASSIGN_OR_RETURN(ir::Instruction * local, EmitLocal(s, input));
      const int64_t dim = original.attributes().iota_dimension;
      const std::vector<int64_t>& axes = input.output[0].dim_axes[static_cast<size_t>(dim)];
      if (s.AxesSize(axes) == 1) return local;
      ir::Instruction* offset =
          s.b().Convert(s.TileOffset(axes, input.local_shape.dim(dim)), input.local_shape.dtype());
      ir::Instruction* shifted =
          s.b().Add(local, s.b().Broadcast(offset, input.local_shape.dims(), {}));
      if (!s.b().status().ok()) return s.b().status().WithContext("%" + original.name());
      return shifted;
    }
    default:
      return Unimplemented("%{} ({}): not a source op", original.name(),
                           ir::OpcodeName(original.opcode()));
  }
}

}  // namespace alpa::spmd
