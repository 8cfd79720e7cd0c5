#include "sharding/batch_norm_strategies.h"

#include <vector>

#include "sharding/follow_util.h"

namespace alpa::sharding {

bool IsBatchNormOpcode(ir::Opcode opcode) {
  return opcode == ir::Opcode::kBatchNormTraining || opcode == ir::Opcode::kBatchNormInference ||
         opcode == ir::Opcode::kBatchNormGrad;
}

Result<StrategySet> BatchNormStrategies(const ir::Instruction& instruction,
                                        const StrategyContext& ctx) {
  const int64_t rank = instruction.operand(0)->shape().rank();
  const int64_t feature = instruction.attributes().feature_index;
  std::vector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != feature) others.push_back(d);
  }
  // Operands and results are the data's rank (data, grad_output, the normalised data, its
  // gradient) or 1 (per feature).
  auto spec_of = [&](const ir::Shape& shape, const ShardingSpec& data) {
    if (shape.rank() == rank) return data;
    ShardingSpec per_feature = ShardingSpec::Replicated(1);
    per_feature.dim_axes[0] = data.dim_axes[static_cast<size_t>(feature)];
    return per_feature;
  };
  return FollowOperand(instruction, ctx, 0, [&](const ShardingSpec& followed) {
    const ShardingSpec data = UnsplitDims(WithoutPartial(followed), others);
    FollowLayout layout;
    for (const ir::Instruction* operand : instruction.operands()) {
      layout.operands.push_back({spec_of(operand->shape(), data)});
    }
    if (instruction.shape().IsTuple()) {
      for (const ir::Shape& leaf : instruction.shape().tuple_shapes()) {
        layout.output.push_back(spec_of(leaf, data));
      }
    } else {
      layout.output.push_back(data);
    }
    return layout;
  });
}

}  // namespace alpa::sharding
