#include "pipeline/layer_construction.h"

#include <unordered_map>

#include "cost/flop_count.h"

namespace alpa::pipeline {
namespace {

bool IsHeavy(const ir::Instruction& instruction, const cost::FlopCount& flops) {
  const ir::Opcode opcode = instruction.opcode();
  return opcode == ir::Opcode::kDot || opcode == ir::Opcode::kConvolution ||
         flops.by_opcode.contains(ir::Opcode::kDot) ||
         flops.by_opcode.contains(ir::Opcode::kConvolution);
}

}  // namespace

Result<ComputationUnits> ComputationToUnits(const ir::Computation& computation) {
  ComputationUnits result;
  for (const ir::Instruction* instruction : computation.MakePostOrder()) {
    result.post_order.push_back(instruction);
  }
  std::unordered_map<const ir::Instruction*, int64_t> position;
  for (size_t i = 0; i < result.post_order.size(); ++i) {
    position.emplace(result.post_order[i], static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < result.post_order.size(); ++i) {
    const ir::Instruction& instruction = *result.post_order[i];
    ALPA_ASSIGN_OR_RETURN(const cost::FlopCount flops, cost::CountFlops(instruction));
    result.units.push_back({.cost = flops.flops, .heavy = IsHeavy(instruction, flops)});
    for (const ir::Instruction* operand : instruction.operands()) {
      if (operand->opcode() == ir::Opcode::kParameter ||
          operand->opcode() == ir::Opcode::kConstant) {
        continue;
      }
      const int64_t producer = position.at(operand);
      result.edges.push_back({.producer = producer,
                              .consumer = static_cast<int64_t>(i),
                              .bytes = operand->shape().ByteSize(),
                              .value_id = producer});
    }
  }
  return result;
}

Result<std::vector<int64_t>> ClusterComputationIntoLayers(const ir::Computation& forward,
                                                          int64_t num_layers, double eps) {
  ALPA_ASSIGN_OR_RETURN(const ComputationUnits units, ComputationToUnits(forward));
  ALPA_ASSIGN_OR_RETURN(
      LayerClustering clustering,
      ClusterUnitsIntoLayers(units.units, units.edges, {.num_layers = num_layers, .eps = eps}));
  return std::move(clustering.layer_of_unit);
}

}  // namespace alpa::pipeline
