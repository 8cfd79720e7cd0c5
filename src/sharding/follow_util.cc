#include "sharding/follow_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

bool IsBroadcastLike(ir::Opcode opcode) {
  return opcode == ir::Opcode::kBroadcast || opcode == ir::Opcode::kConstant ||
         opcode == ir::Opcode::kIota;
}

std::string LeafSpecsString(const LeafSpecs& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) out += (i > 0 ? ", " : "") + ToString(specs[i]);
  return out;
}

}  // namespace

int64_t ChooseOperandToFollow(const ir::Instruction& instruction, const StrategyContext& ctx,
                              const std::vector<int64_t>& candidates) {
  ALPA_CHECK(!candidates.empty(), "%{}: no operand to follow", instruction.name());
  // Larger keys win; the negated index makes the lower index win a tie.
  using Key = std::tuple<int64_t, bool, int64_t, int64_t>;
  int64_t best = -1;
  Key best_key;
  for (int64_t k : candidates) {
    const ir::Instruction& operand = *instruction.operand(k);
    const StrategySet& set = ctx.strategies_of(operand);
    int64_t max_tiles = 0;
    for (const Strategy& strategy : set.strategies) {
      max_tiles = std::max(max_tiles, SplitAxesSize(strategy.output.front(), ctx.mesh_shape()));
    }
    const Key key{max_tiles, !IsBroadcastLike(operand.opcode()),
                  static_cast<int64_t>(set.strategies.size()), -k};
    if (best < 0 || key > best_key) {
      best = k;
      best_key = key;
    }
  }
  return best;
}

ShardingSpec WithoutPartial(ShardingSpec spec) {
  spec.partial_axes.clear();
  return spec;
}

ShardingSpec UnsplitDims(ShardingSpec spec, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) spec.dim_axes[static_cast<size_t>(d)].clear();
  return spec;
}

void SetDataMovementCosts(Strategy& strategy, const ir::Instruction& instruction,
                          double instruction_seconds, const std::vector<int64_t>& mesh_shape) {
  // An empty tuple (a call JAX leaves with nothing in it) has no leaves: one device's work.
  const int64_t parallelism =
      strategy.output.empty() ? 1 : SplitAxesSize(strategy.output.front(), mesh_shape);
  strategy.compute_seconds = instruction_seconds / static_cast<double>(parallelism);
  strategy.memory_bytes = LeafBytes(strategy.output, instruction.shape(), mesh_shape);
}

void CheckStrategySpecs(const Strategy& strategy, const ir::Instruction& instruction,
                        const std::vector<int64_t>& mesh_shape) {
  // `operand` -1 is the result. Called for every strategy of every instruction: the message is
  // formatted only when a check fails.
  auto check = [&](const LeafSpecs& specs, const ir::Shape& shape, int64_t operand) {
    auto what = [operand] {
      return operand < 0 ? std::string("result") : fmt::format("operand {}", operand);
    };
    const std::vector<const ir::Shape*> leaves = ShapeLeaves(shape);
    ALPA_CHECK(leaves.size() == specs.size(), "%{} strategy '{}': {} specs for {} leaves of {}",
               instruction.name(), strategy.name, specs.size(), leaves.size(), what());
    for (size_t i = 0; i < leaves.size(); ++i) {
      const Status status = CheckSpec(specs[i], mesh_shape, leaves[i]->dims());
      ALPA_CHECK(status.ok(), "%{} strategy '{}', {}: {}", instruction.name(), strategy.name,
                 what(), status.message());
    }
  };
  check(strategy.output, instruction.shape(), -1);
  ALPA_CHECK(strategy.operands.size() == static_cast<size_t>(instruction.operand_count()),
             "%{} strategy '{}': {} operand layouts for {} operands", instruction.name(),
             strategy.name, strategy.operands.size(), instruction.operand_count());
  for (int64_t k = 0; k < instruction.operand_count(); ++k) {
    check(strategy.operands[static_cast<size_t>(k)], instruction.operand(k)->shape(), k);
  }
}

Result<StrategySet> FollowOperand(const ir::Instruction& instruction, const StrategyContext& ctx,
                                  int64_t followed, const FollowRule& rule) {
  ALPA_ASSIGN_OR_RETURN(const double seconds, InstructionSeconds(instruction, ctx));
  const ir::Instruction& operand = *instruction.operand(followed);
  StrategySet set;
  set.follows_operand = followed;
  for (const Strategy& source : ctx.strategies_of(operand).strategies) {
    const ShardingSpec& spec = source.output.front();
    FollowLayout layout = rule(spec);
    Strategy strategy;
    strategy.name =
        fmt::format("{} <- %{} {}", LeafSpecsString(layout.output), operand.name(), ToString(spec));
    strategy.output = std::move(layout.output);
    strategy.operands = std::move(layout.operands);
    SetDataMovementCosts(strategy, instruction, seconds, ctx.mesh_shape());
    CheckStrategySpecs(strategy, instruction, ctx.mesh_shape());
    set.strategies.push_back(std::move(strategy));
  }
  return set;
}

}  // namespace alpa::sharding
