// The ops the generators give few layouts (sharding/misc_strategies.h, source_strategies.h):
//   sort, top-k      along a dimension that their strategies keep whole: each device sorts its
//                    tile's rows, the local op;
//   while, conditional, call, after-all, add-dependency, rng, rng-bit-generator,
//   rng-get-and-update-state
//                    replicated only: every device runs the whole op on whole operands (its
//                    callees copied unchanged, their shapes already whole), so a replicated
//                    rng draws the unsplit op's numbers on every device.
#include <fmt/format.h>

#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

bool AllReplicated(const sharding::LeafSpecs& specs) {
  for (const sharding::ShardingSpec& spec : specs) {
    if (!spec.IsFullyReplicated()) return false;
  }
  return true;
}

}  // namespace

Result<ir::Instruction*> HandleSort(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  const int64_t rank = original.operand(0)->shape().rank();
  const int64_t dim =
      original.opcode() == ir::Opcode::kTopK ? rank - 1 : original.attributes().dimensions.front();
  for (const sharding::LeafSpecs& operand : input.strategy.operands) {
    if (!operand[0].dim_axes[static_cast<size_t>(dim)].empty()) {
      return Internal("%{}: strategy '{}' splits the sorted dimension {}", original.name(),
                      input.strategy.name, dim);
    }
  }
  return EmitLocal(s, input);
}

// Per-feature statistics: local when only the feature dimension is split
// (sharding/batch_norm_strategies.h).
Result<ir::Instruction*> HandleBatchNorm(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  const int64_t feature = original.attributes().feature_index;
  const sharding::ShardingSpec& data = input.strategy.operands[0][0];
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d != feature && !data.dim_axes[static_cast<size_t>(d)].empty()) {
      return Internal("%{}: strategy '{}' splits dimension {}, not the features ({})",
                      original.name(), input.strategy.name, d, feature);
    }
  }
  return EmitLocal(s, input);
}

Result<ir::Instruction*> HandleReplicated(SpmdBuilder& s, const OpInput& input) {
  bool replicated = AllReplicated(input.output);
  for (const sharding::LeafSpecs& operand : input.strategy.operands) {
    replicated = replicated && AllReplicated(operand);
  }
  if (!replicated) {
    return Unimplemented(
        "%{} ({}): strategy '{}' splits a value; the partitioner runs this op "
        "replicated only",
        input.original.name(), ir::OpcodeName(input.original.opcode()), input.strategy.name);
  }
  return EmitLocal(s, input);
}

}  // namespace alpa::spmd
