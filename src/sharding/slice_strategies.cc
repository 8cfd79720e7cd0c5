#include "sharding/slice_strategies.h"

#include <cstdint>
#include <vector>

#include "sharding/follow_util.h"

namespace alpa::sharding {
namespace {

using ir::Opcode;

// The dims that must be unsplit in every data operand and the result (see the header).
std::vector<int64_t> ChangedDims(const ir::Instruction& instruction) {
  const ir::Attributes& attributes = instruction.attributes();
  const ir::Shape& operand = instruction.operand(0)->shape();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const auto i = static_cast<size_t>(d);
    bool changed = false;
    switch (instruction.opcode()) {
      case Opcode::kSlice:
        changed = instruction.shape().dim(d) != operand.dim(d);
        break;
      case Opcode::kPad: {
        const ir::PaddingDim& pad = attributes.padding[i];
        changed = pad.low != 0 || pad.high != 0 || pad.interior != 0;
        break;
      }
      case Opcode::kConcatenate:
        changed = d == attributes.dimensions.front();
        break;
      case Opcode::kDynamicSlice:
        changed = attributes.slice_sizes[i] != operand.dim(d);
        break;
      case Opcode::kDynamicUpdateSlice:
        changed = instruction.operand(1)->shape().dim(d) != operand.dim(d);
        break;
      default:
        ALPA_CHECK(false, "SliceStrategies called for %{}", instruction.name());
    }
    if (changed) dims.push_back(d);
  }
  return dims;
}

}  // namespace

bool IsSliceStrategyOpcode(ir::Opcode opcode) {
  switch (opcode) {
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
      return true;
    default:
      return false;
  }
}

Result<StrategySet> SliceStrategies(const ir::Instruction& instruction,
                                    const StrategyContext& ctx) {
  ALPA_CHECK(IsSliceStrategyOpcode(instruction.opcode()), "SliceStrategies called for %{}",
             instruction.name());
  const Opcode opcode = instruction.opcode();
  const std::vector<int64_t> changed = ChangedDims(instruction);
  // Data operands share the followed layout; the rest (pad value, start indices) are scalars.
  const int64_t data_operands = opcode == Opcode::kConcatenate ? instruction.operand_count()
                                : opcode == Opcode::kDynamicUpdateSlice ? 2
                                                                        : 1;
  int64_t followed = 0;
  if (opcode == Opcode::kConcatenate) {
    std::vector<int64_t> all;
    for (int64_t k = 0; k < data_operands; ++k) all.push_back(k);
    followed = ChooseOperandToFollow(instruction, ctx, all);
  }
  return FollowOperand(instruction, ctx, followed, [&](const ShardingSpec& spec) {
    const ShardingSpec needed =
        UnsplitDims(opcode == Opcode::kPad ? WithoutPartial(spec) : spec, changed);
    FollowLayout layout;
    for (int64_t k = 0; k < instruction.operand_count(); ++k) {
      layout.operands.push_back(
          {k < data_operands ? needed
                             : ShardingSpec::Replicated(instruction.operand(k)->shape().rank())});
    }
    layout.output = {needed};
    return layout;
  });
}

}  // namespace alpa::sharding
