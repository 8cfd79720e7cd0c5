#include "sharding/strategy_dispatch.h"

#include "sharding/convolution_strategies.h"
#include "sharding/dot_strategies.h"
#include "sharding/elementwise_strategies.h"
#include "sharding/gather_scatter_strategies.h"
#include "sharding/misc_strategies.h"
#include "sharding/reduce_strategies.h"
#include "sharding/shape_strategies.h"
#include "sharding/slice_strategies.h"
#include "sharding/source_strategies.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

bool IsSourceOpcode(ir::Opcode opcode) {
  switch (opcode) {
    case ir::Opcode::kParameter:
    case ir::Opcode::kConstant:
    case ir::Opcode::kIota:
    case ir::Opcode::kRng:
    case ir::Opcode::kRngBitGenerator:
    case ir::Opcode::kRngGetAndUpdateState:
    case ir::Opcode::kPartitionId:
    case ir::Opcode::kReplicaId:
      return true;
    default:
      return false;
  }
}

// An op without rules, run whole on every device: every operand gathered, the result replicated.
Result<StrategySet> ReplicatedUnit(const ir::Instruction& instruction,
                                   const StrategyContext& context) {
  Strategy strategy;
  strategy.name = "R (no sharding rules: replicated)";
  strategy.output = ReplicatedLeaves(instruction.shape());
  for (const ir::Instruction* operand : instruction.operands()) {
    strategy.operands.push_back(ReplicatedLeaves(operand->shape()));
  }
  ALPA_ASSIGN_OR_RETURN(strategy.compute_seconds, InstructionSeconds(instruction, context));
  strategy.memory_bytes = LeafBytes(strategy.output, instruction.shape(), context.mesh_shape());
  StrategySet set;
  set.strategies.push_back(std::move(strategy));
  return set;
}

}  // namespace

Result<StrategySet> DispatchStrategies(const ir::Instruction& instruction,
                                       const StrategyContext& context) {
  const ir::Opcode opcode = instruction.opcode();
  switch (opcode) {
    case ir::Opcode::kDot:
      return DotStrategies(instruction, context);
    case ir::Opcode::kConvolution:
      return ConvolutionStrategies(instruction, context);
    case ir::Opcode::kReduce:
      return ReduceStrategies(instruction, context);
    case ir::Opcode::kReduceWindow:
      return ReduceWindowStrategies(instruction, context);
    case ir::Opcode::kSelectAndScatter:
      return SelectAndScatterStrategies(instruction, context);
    case ir::Opcode::kGather:
    case ir::Opcode::kScatter:
      return GatherScatterStrategies(instruction, context);
    default:
      break;
  }
  if (IsSourceOpcode(opcode)) return SourceStrategies(instruction, context);
  if (IsElementwiseStrategyOpcode(opcode)) return ElementwiseStrategies(instruction, context);
  if (IsShapeStrategyOpcode(opcode)) return ShapeStrategies(instruction, context);
  if (IsSliceStrategyOpcode(opcode)) return SliceStrategies(instruction, context);
  if (IsMiscStrategyOpcode(opcode)) {
    return MiscStrategies(instruction, context, MiscOptions{context.options.replicate_unknown_ops});
  }
  if (context.options.replicate_unknown_ops) return ReplicatedUnit(instruction, context);
  return Unimplemented(
      "no sharding rules for opcode '{}'; rerun with --replicate-unknown-ops to run it "
      "replicated on every device",
      ir::OpcodeName(opcode));
}

}  // namespace alpa::sharding
