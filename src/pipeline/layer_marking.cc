#include "pipeline/layer_marking.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/layer_boundary.h"
#include "pipeline/layer_construction.h"

namespace alpa::pipeline {
namespace {

using ir::Instruction;

// The computation's instructions in post order, taken out of it to be added back.
struct Taken {
  std::vector<Instruction*> order;
  std::map<const Instruction*, std::unique_ptr<Instruction>> owned;
};

Taken TakeInPostOrder(ir::Computation& computation) {
  Taken taken;
  taken.order = computation.MakePostOrder();
  for (std::unique_ptr<Instruction>& instruction : computation.TakeInstructions()) {
    taken.owned[instruction.get()] = std::move(instruction);
  }
  return taken;
}

void RemapControlPredecessors(Instruction& instruction,
                              const std::map<const Instruction*, Instruction*>& mapped) {
  std::vector<Instruction*> predecessors = instruction.control_predecessors();
  instruction.mutable_control_predecessors().clear();
  for (Instruction* predecessor : predecessors) {
    instruction.AddControlPredecessor(mapped.at(predecessor));
  }
}

Result<int64_t> RemoveForwardMarkers(ir::Computation& loss) {
  int64_t markers = 0;
  for (const std::unique_ptr<Instruction>& instruction : loss.instructions()) {
    const std::optional<ir::LayerBoundary> marker = ir::AsLayerBoundary(*instruction);
    if (!marker) continue;
    if (marker->backward) {
      return InvalidArgument(
          "%{}: a backward layer boundary in a forward computation; automatic layers replace "
          "the forward markers of a loss, before autodiff",
          instruction->name());
    }
    ++markers;
  }
  if (markers == 0) return 0;
  Taken taken = TakeInPostOrder(loss);
  std::map<const Instruction*, Instruction*> mapped;
  for (Instruction* instruction : taken.order) {
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      instruction->ReplaceOperand(i, mapped.at(instruction->operand(i)));
    }
    RemapControlPredecessors(*instruction, mapped);
    mapped[instruction] = ir::AsLayerBoundary(*instruction)
                              ? instruction->operand(0)
                              : loss.AddInstruction(std::move(taken.owned.at(instruction)));
  }
  loss.set_root(mapped.at(loss.root()));
  return markers;
}

// Inserts the markers that carry each parameter-dependent value from its layer to the later
// layers that read it.
class MarkerChains {
 public:
  MarkerChains(ir::Computation& loss, const std::vector<int64_t>& layer_of)
      : loss_(loss), layer_of_(layer_of) {}

  int64_t Run() {
    Taken taken = TakeInPostOrder(loss_);
    for (size_t t = 0; t < taken.order.size(); ++t) {
      Instruction* instruction = taken.order[t];
      position_[instruction] = t;
      bool reads_parameter = instruction->opcode() == ir::Opcode::kParameter;
      for (int64_t i = 0; i < instruction->operand_count(); ++i) {
        Instruction* operand = instruction->operand(i);
        const size_t p = position_.at(operand);
        reads_parameter = reads_parameter || depends_on_parameter_[p];
        if (!depends_on_parameter_[p] || operand->opcode() == ir::Opcode::kParameter ||
            layer_of_[p] >= layer_of_[t]) {
          continue;
        }
        instruction->ReplaceOperand(i, Leaving(operand, layer_of_[t] - 1));
      }
      depends_on_parameter_.push_back(reads_parameter);
      loss_.AddInstruction(std::move(taken.owned.at(instruction)));
    }
    return inserted_;
  }

 private:
  // `value` marked as an output of forward layer `layer` (>= its own layer): the last link of
  // its chain of markers.
  Instruction* Leaving(Instruction* value, int64_t layer) {
    const int64_t own = layer_of_[position_.at(value)];
    // std::map: the recursion's insertions leave `it` valid.
    auto [it, added] = chains_.try_emplace({value, layer}, nullptr);
    if (!added) return it->second;
    Instruction* from = layer == own ? value : Leaving(value, layer - 1);
    auto marker = std::make_unique<Instruction>(value->name() + ".leaves" + std::to_string(layer),
                                                ir::Opcode::kCustomCall, value->shape());
    marker->AppendOperand(from);
    ir::Attributes& attributes = marker->mutable_attributes();
    attributes.custom_call_target = std::string(ir::kLayerBoundaryTarget);
    attributes.frontend_attributes = {{"layer", std::to_string(layer)}, {"pass", "forward"}};
    ++inserted_;
    it->second = loss_.AddInstruction(std::move(marker));
    return it->second;
  }

  ir::Computation& loss_;
  const std::vector<int64_t>& layer_of_;
  std::map<const Instruction*, size_t> position_;
  std::vector<bool> depends_on_parameter_;
  std::map<std::pair<const Instruction*, int64_t>, Instruction*> chains_;
  int64_t inserted_ = 0;
};

}  // namespace

Result<LayerMarkingStats> MarkAutoLayers(ir::Computation& loss, int64_t num_layers, double eps) {
  LayerMarkingStats stats;
  ALPA_ASSIGN_OR_RETURN(stats.removed, RemoveForwardMarkers(loss));
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> layer_of,
                        ClusterComputationIntoLayers(loss, num_layers, eps));
  stats.inserted = MarkerChains(loss, layer_of).Run();
  return stats;
}

}  // namespace alpa::pipeline
