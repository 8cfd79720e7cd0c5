#include "sharding/strategy_dispatch.h"

#include "sharding/batch_norm_strategies.h"
#include "sharding/convolution_strategies.h"
#include "sharding/dot_strategies.h"
#include "sharding/elementwise_strategies.h"
#include "sharding/gather_scatter_strategies.h"
#include "sharding/misc_strategies.h"
#include "sharding/reduce_strategies.h"
#include "sharding/shape_strategies.h"
#include "sharding/slice_strategies.h"
#include "sharding/source_strategies.h"

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
  if (IsBatchNormOpcode(opcode)) return BatchNormStrategies(instruction, context);
  if (IsElementwiseStrategyOpcode(opcode)) return ElementwiseStrategies(instruction, context);
  if (IsShapeStrategyOpcode(opcode)) return ShapeStrategies(instruction, context);
  if (IsSliceStrategyOpcode(opcode)) return SliceStrategies(instruction, context);
  if (IsMiscStrategyOpcode(opcode)) {
    return MiscStrategies(instruction, context);
  }
  if (context.options.replicate_unknown_ops) return ReplicatedUnitStrategies(instruction, context);
  return Unimplemented(
      "no sharding rules for opcode '{}'; rerun with --replicate-unknown-ops to run it "
      "replicated on every device",
      ir::OpcodeName(opcode));
}

}  // namespace alpa::sharding
