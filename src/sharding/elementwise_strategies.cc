#include "sharding/elementwise_strategies.h"

#include <vector>

#include "ir/dtype.h"
#include "sharding/follow_util.h"

namespace alpa::sharding {
namespace {

using ir::Opcode;

// Linear in the operands taken together: partial sums pass through (see the header).
bool IsLinear(const ir::Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kNegate:
      return true;
    case Opcode::kConvert:
      return ir::IsFloating(instruction.operand(0)->shape().dtype()) &&
             ir::IsFloating(instruction.shape().dtype());
    default:
      return false;
  }
}

// bitcast-convert's layouts: the operand's spec (without partial axes) with the trailing
// dimension it removes unsplit, and the result's with the trailing dimension it adds unsplit.
FollowLayout BitcastConvertLayout(const ShardingSpec& followed, int64_t result_rank) {
  ShardingSpec needed = WithoutPartial(followed);
  ShardingSpec result = needed;
  if (needed.rank() > result_rank) {  // widening: u8[4,4] -> f32[4]
    needed = UnsplitDims(needed, {needed.rank() - 1});
    result = needed;
    result.dim_axes.pop_back();
  } else if (needed.rank() < result_rank) {  // narrowing: f32[4] -> u8[4,4]
    result.dim_axes.emplace_back();
  }
  return FollowLayout{{{needed}}, {result}};
}

}  // namespace

bool IsElementwiseStrategyOpcode(ir::Opcode opcode) {
  switch (opcode) {
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kMap:
      return true;
    default:
      return ir::IsElementwiseUnary(opcode) || ir::IsElementwiseBinary(opcode);
  }
}

Result<StrategySet> ElementwiseStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx) {
  ALPA_CHECK(IsElementwiseStrategyOpcode(instruction.opcode()) && instruction.shape().IsArray(),
             "ElementwiseStrategies called for %{}", instruction.name());
  const int64_t rank = instruction.shape().rank();
  if (instruction.opcode() == Opcode::kBitcastConvert) {
    return FollowOperand(instruction, ctx, 0, [rank](const ShardingSpec& followed) {
      return BitcastConvertLayout(followed, rank);
    });
  }
  // Operands of the result's rank can be followed; the others are scalars of a ranked op.
  std::vector<int64_t> candidates;
  for (int64_t k = 0; k < instruction.operand_count(); ++k) {
    if (instruction.operand(k)->shape().rank() == rank) candidates.push_back(k);
  }
  const int64_t followed = ChooseOperandToFollow(instruction, ctx, candidates);
  const bool linear = IsLinear(instruction);
  return FollowOperand(instruction, ctx, followed, [&](const ShardingSpec& spec) {
    const ShardingSpec needed = linear ? spec : WithoutPartial(spec);
    FollowLayout layout;
    for (const ir::Instruction* operand : instruction.operands()) {
      const bool scalar = operand->shape().rank() != rank;
      layout.operands.push_back({scalar ? ShardingSpec::Replicated(0) : needed});
    }
    layout.output = {needed};
    return layout;
  });
}

}  // namespace alpa::sharding
