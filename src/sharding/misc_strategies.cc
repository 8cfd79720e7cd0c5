#include "sharding/misc_strategies.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/known_custom_calls.h"
#include "ir/module.h"
#include "sharding/follow_util.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

using ir::Opcode;

// sort and topk: follow, with the sorted dim unsplit and no partial axes.
Result<StrategySet> SortStrategies(const ir::Instruction& instruction, const StrategyContext& ctx) {
  const bool topk = instruction.opcode() == Opcode::kTopK;
  const int64_t rank = instruction.operand(0)->shape().rank();
  const int64_t dim = topk ? rank - 1 : instruction.attributes().dimensions.front();
  std::vector<int64_t> candidates;
  for (int64_t k = 0; k < instruction.operand_count(); ++k) candidates.push_back(k);
  const int64_t followed = ChooseOperandToFollow(instruction, ctx, candidates);
  const auto leaves = static_cast<size_t>(instruction.shape().LeafCount());
  return FollowOperand(instruction, ctx, followed, [&](const ShardingSpec& spec) {
    const ShardingSpec needed = UnsplitDims(WithoutPartial(spec), {dim});
    FollowLayout layout;
    layout.operands.assign(static_cast<size_t>(instruction.operand_count()), {needed});
    layout.output.assign(leaves, needed);
    return layout;
  });
}

}  // namespace

Result<StrategySet> ReplicatedUnitStrategies(const ir::Instruction& instruction,
                                             const StrategyContext& ctx) {
  ALPA_ASSIGN_OR_RETURN(const double seconds, InstructionSeconds(instruction, ctx));
  Strategy strategy;
  strategy.name = "R";
  strategy.output = ReplicatedLeaves(instruction.shape());
  for (const ir::Instruction* operand : instruction.operands()) {
    strategy.operands.push_back(ReplicatedLeaves(operand->shape()));
  }
  SetDataMovementCosts(strategy, instruction, seconds, ctx.mesh_shape());
  CheckStrategySpecs(strategy, instruction, ctx.mesh_shape());
  StrategySet set;
  set.strategies.push_back(std::move(strategy));
  return set;
}

namespace {

// "file:line:column: " of a parsed instruction, "" for one built in C++.
std::string PlaceOf(const ir::Instruction& instruction) {
  if (!instruction.location().known()) return "";
  const ir::Computation* computation = instruction.parent();
  const ir::Module* module = computation != nullptr ? computation->parent() : nullptr;
  const std::string file =
      module != nullptr && !module->source_file().empty() ? module->source_file() : "<input>";
  return fmt::format("{}:{}:{}: ", file, instruction.location().line,
                     instruction.location().column);
}

Result<StrategySet> CustomCallStrategies(const ir::Instruction& instruction,
                                         const StrategyContext& ctx) {
  if (ir::IsIdentityCustomCall(instruction)) {
    return FollowOperand(instruction, ctx, 0, [](const ShardingSpec& spec) {
      return FollowLayout{{{spec}}, {spec}};
    });
  }
  if (ir::IsElementwiseCustomCall(instruction)) {
    // A function of each element: pending sums are summed first, as for other nonlinear ops.
    return FollowOperand(instruction, ctx, 0, [](const ShardingSpec& spec) {
      const ShardingSpec whole = WithoutPartial(spec);
      return FollowLayout{{{whole}}, {whole}};
    });
  }
  if (ctx.options.replicate_unknown_ops) return ReplicatedUnitStrategies(instruction, ctx);
  return Unimplemented(
      "{}custom-call %{} (target \"{}\") has no sharding rules; rerun with "
      "--replicate-unknown-ops to run it replicated on every device",
      PlaceOf(instruction), instruction.name(), instruction.attributes().custom_call_target);
}

}  // namespace

bool IsMiscStrategyOpcode(ir::Opcode opcode) {
  switch (opcode) {
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kCustomCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return true;
    default:
      return ir::IsCollective(opcode);
  }
}

Result<StrategySet> MiscStrategies(const ir::Instruction& instruction, const StrategyContext& ctx) {
  ALPA_CHECK(IsMiscStrategyOpcode(instruction.opcode()), "MiscStrategies called for %{}",
             instruction.name());
  switch (instruction.opcode()) {
    case Opcode::kSort:
    case Opcode::kTopK:
      return SortStrategies(instruction, ctx);
    case Opcode::kCustomCall:
      return CustomCallStrategies(instruction, ctx);
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
      return ReplicatedUnitStrategies(instruction, ctx);  // run replicated (spmd/misc_handler.cc)
    default:
      // Collectives (a module already partitioned) and host I/O: the partitioner cannot run
      // them, so they are priced only when the user asks for a cost estimate regardless.
      if (ctx.options.replicate_unknown_ops) return ReplicatedUnitStrategies(instruction, ctx);
      return Unimplemented(
          "{}{} %{}: the SPMD partitioner cannot run a collective or host I/O of the input "
          "(plan the module before it was partitioned); rerun with --replicate-unknown-ops to "
          "price it replicated on every device",
          PlaceOf(instruction), ir::OpcodeName(instruction.opcode()), instruction.name());
  }
}

}  // namespace alpa::sharding
