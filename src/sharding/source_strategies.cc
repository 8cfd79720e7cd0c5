#include "sharding/source_strategies.h"

#include <utility>

#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

// The strategy that lays the result out as `output` (one spec per leaf).
Strategy Layout(const ir::Instruction& instruction, const StrategyContext& ctx, double full_seconds,
                LeafSpecs output) {
  Strategy strategy;
  int64_t parallelism = 1;
  for (const ShardingSpec& spec : output) parallelism *= SplitAxesSize(spec, ctx.mesh_shape());
  strategy.name = output.size() == 1 ? ToString(output[0]) : "R";
  strategy.compute_seconds = full_seconds / static_cast<double>(parallelism);
  strategy.memory_bytes = LeafBytes(output, instruction.shape(), ctx.mesh_shape());
  if (instruction.opcode() == ir::Opcode::kParameter) {
    // Every step streams its inputs into device memory, each device its own tile:
    //   seconds = tile bytes / (memory bandwidth * memory efficiency)
    // A replicated batch costs every device the whole batch, which a split saves; without this
    // term a replicated parameter would cost nothing but memory (Alpa charged replicated
    // parameters a flat penalty for the same reason, reference/alpa.md 2.a.3).
    strategy.compute_seconds += static_cast<double>(strategy.memory_bytes) /
                                (ctx.device.memory_bandwidth * ctx.efficiency.memory);
  }
  strategy.output = std::move(output);
  for (const ir::Instruction* operand : instruction.operands()) {
    strategy.operands.push_back(ReplicatedLeaves(operand->shape()));
  }
  return strategy;
}

}  // namespace

Result<StrategySet> SourceStrategies(const ir::Instruction& instruction,
                                     const StrategyContext& ctx) {
  bool split = false;
  switch (instruction.opcode()) {
    case ir::Opcode::kParameter:
      split = instruction.shape().IsArray();
      break;
    case ir::Opcode::kIota:
      split = true;
      break;
    // A split rng would draw its tile's numbers, which are not the unsplit op's tile (here or in
    // XLA): replicated, every device draws the whole op's (spmd/misc_handler.cc).
    case ir::Opcode::kRng:
    case ir::Opcode::kConstant:
    case ir::Opcode::kRngBitGenerator:
    case ir::Opcode::kRngGetAndUpdateState:
    case ir::Opcode::kPartitionId:
    case ir::Opcode::kReplicaId:
      break;
    default:
      return Unimplemented(
          "source strategies: %{} ({}) is not a parameter, constant, iota, rng "
          "or device id",
          instruction.name(), ir::OpcodeName(instruction.opcode()));
  }
  ALPA_ASSIGN_OR_RETURN(const double full_seconds, InstructionSeconds(instruction, ctx));
  StrategySet set;
  if (split) {
    for (const DimAxes& axes :
         EnumerateDimSplits(instruction.shape().dims(), ctx.mesh_shape(), {})) {
      ShardingSpec spec;
      spec.dim_axes = axes;
      set.strategies.push_back(Layout(instruction, ctx, full_seconds, {std::move(spec)}));
    }
  }
  set.strategies.push_back(
      Layout(instruction, ctx, full_seconds, ReplicatedLeaves(instruction.shape())));
  return set;
}

}  // namespace alpa::sharding
