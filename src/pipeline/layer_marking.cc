#include "pipeline/layer_marking.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/layer_boundary.h"
#include "pipeline/layer_construction.h"
#include "pipeline/stage_slicing.h"

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

Instruction* AddBoundary(ir::Computation& loss, Instruction* value, int64_t layer) {
  auto marker = std::make_unique<Instruction>(value->name() + ".leaves" + std::to_string(layer),
                                              ir::Opcode::kCustomCall, value->shape());
  marker->AppendOperand(value);
  ir::Attributes& attributes = marker->mutable_attributes();
  attributes.custom_call_target = std::string(ir::kLayerBoundaryTarget);
  attributes.frontend_attributes = {{"layer", std::to_string(layer)}, {"pass", "forward"}};
  return loss.AddInstruction(std::move(marker));
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
    ++inserted_;
    it->second = AddBoundary(loss_, from, layer);
    return it->second;
  }

  ir::Computation& loss_;
  const std::vector<int64_t>& layer_of_;
  std::map<const Instruction*, size_t> position_;
  std::vector<bool> depends_on_parameter_;
  std::map<std::pair<const Instruction*, int64_t>, Instruction*> chains_;
  int64_t inserted_ = 0;
};

// One of Alpa's pipeline markers (see ReadAlpaPipelineMarkers).
struct AlpaMarker {
  bool end = false;
  std::vector<Instruction*> values;  // what it passes on, by tuple index
};

// The marker's mark type and layer name: Alpa writes them as the metadata's op_type and op_name;
// alpa_cpp.mark_pipeline_boundary (python/alpa_cpp/pipeline_marker.py) as backend_config="end 3",
// since current JAX writes no op_type.
struct MarkKind {
  std::string type;
  std::string layer;
};

MarkKind MarkKindOf(const Instruction& marker) {
  const std::string type = ir::MetadataField(marker.attributes(), "op_type");
  if (!type.empty()) return {type, ir::MetadataField(marker.attributes(), "op_name")};
  std::string config = marker.attributes().backend_config;
  if (config.size() >= 2 && config.front() == '"' && config.back() == '"') {
    config = config.substr(1, config.size() - 2);
  }
  const size_t space = config.find(' ');
  if (space == std::string::npos) return {config, ""};
  return {config.substr(0, space), config.substr(space + 1)};
}

std::string DescribeAlpaMarker(const Instruction& marker) {
  const MarkKind kind = MarkKindOf(marker);
  return fmt::format("%{} (Alpa's pipeline_marker, mark type '{}', layer '{}')", marker.name(),
                     kind.type, kind.layer);
}

Result<AlpaMarker> ReadAlpaMarker(const Instruction& marker) {
  const std::string type = MarkKindOf(marker).type;
  const std::string where = DescribeAlpaMarker(marker);
  if (type == "boundary") {
    return InvalidArgument(
        "{}: a boundary from mark_pipeline_boundary() in a function lowered without "
        "alpa.parallelize carries no values, so nothing says what crosses it; lower the loss "
        "without it and use --auto-layers N",
        where);
  }
  if (type != "start" && type != "end") {
    return InvalidArgument(
        "{}: only the start and end markers of a forward loss are read; backward and jvp "
        "markers belong to a whole train step (dump the loss function instead)",
        where);
  }
  AlpaMarker read{.end = type == "end", .values = {}};
  const bool one_tuple = marker.operand_count() == 1 && marker.operand(0)->shape().IsTuple();
  if (one_tuple && marker.operand(0)->opcode() != ir::Opcode::kTuple) {
    return InvalidArgument("{}: its operand %{} is a tuple not built by a tuple instruction", where,
                           marker.operand(0)->name());
  }
  const Instruction& holder = one_tuple ? *marker.operand(0) : marker;
  for (Instruction* value : holder.operands()) read.values.push_back(value);
  const ir::Shape& shape = marker.shape();
  bool passes_them_on =
      shape.IsTuple() && shape.tuple_size() == static_cast<int64_t>(read.values.size());
  for (size_t i = 0; passes_them_on && i < read.values.size(); ++i) {
    passes_them_on = shape.tuple_shape(static_cast<int64_t>(i)).Compatible(read.values[i]->shape());
  }
  if (!passes_them_on) {
    return InvalidArgument("{}: its result {} is not the tuple of the {} values it marks", where,
                           shape.ToString(), read.values.size());
  }
  return read;
}

bool IsAlpaMarker(const Instruction& instruction) {
  return instruction.opcode() == ir::Opcode::kCustomCall &&
         instruction.attributes().custom_call_target == "pipeline_marker";
}

// Replaces Alpa's markers by ours, unchained: a value an end marker passes on is marked with the
// number of end markers it passed (the layer that end marker closes). Returns how many went.
Result<int64_t> ReplaceAlpaMarkers(ir::Computation& loss) {
  std::map<const Instruction*, AlpaMarker> markers;
  for (const std::unique_ptr<Instruction>& instruction : loss.instructions()) {
    if (!IsAlpaMarker(*instruction)) continue;
    ALPA_ASSIGN_OR_RETURN(markers[instruction.get()], ReadAlpaMarker(*instruction));
  }
  if (markers.empty()) return 0;
  for (const std::unique_ptr<Instruction>& instruction : loss.instructions()) {
    if (instruction->opcode() == ir::Opcode::kGetTupleElement) continue;
    for (const Instruction* operand : instruction->operands()) {
      if (!markers.contains(operand)) continue;
      return InvalidArgument("{}: %{} reads it whole; its values must be read by get-tuple-element",
                             DescribeAlpaMarker(*operand), instruction->name());
    }
  }
  if (markers.contains(loss.root())) {
    return InvalidArgument("{}: the computation's result is the marker itself, not a scalar loss",
                           DescribeAlpaMarker(*loss.root()));
  }
  Taken taken = TakeInPostOrder(loss);
  std::map<const Instruction*, Instruction*> mapped;
  // layer(x) = max over operands o of layer(o), where a value out of an end marker of layer k
  // is in layer k + 1; the layer of a marker is that of its values.
  std::map<const Instruction*, int64_t> layer;
  for (Instruction* instruction : taken.order) {
    int64_t own = 0;
    for (const Instruction* operand : instruction->operands()) {
      own = std::max(own, layer.at(operand));
    }
    if (markers.contains(instruction)) {  // read through its get-tuple-elements
      layer[instruction] = own;
      continue;
    }
    const auto marker = instruction->opcode() == ir::Opcode::kGetTupleElement
                            ? markers.find(instruction->operand(0))
                            : markers.end();
    if (marker != markers.end()) {
      const auto index = static_cast<size_t>(instruction->attributes().tuple_index);
      Instruction* value = marker->second.values.at(index);
      const int64_t closed = layer.at(marker->first);
      const bool is_result = instruction == loss.root();
      layer[instruction] = marker->second.end && !is_result ? closed + 1 : layer.at(value);
      mapped[instruction] = marker->second.end && !is_result
                                ? AddBoundary(loss, mapped.at(value), closed)
                                : mapped.at(value);
      continue;
    }
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      instruction->ReplaceOperand(i, mapped.at(instruction->operand(i)));
    }
    std::vector<Instruction*> predecessors = instruction->control_predecessors();
    instruction->mutable_control_predecessors().clear();
    for (Instruction* predecessor : predecessors) {
      if (!markers.contains(predecessor)) {
        instruction->AddControlPredecessor(mapped.at(predecessor));
      }
    }
    layer[instruction] = own;
    mapped[instruction] = loss.AddInstruction(std::move(taken.owned.at(instruction)));
  }
  loss.set_root(mapped.at(loss.root()));
  loss.RemoveDeadInstructions();  // the tuples the markers read
  return static_cast<int64_t>(markers.size());
}

}  // namespace

Result<LayerMarkingStats> ReadAlpaPipelineMarkers(ir::Computation& loss) {
  LayerMarkingStats stats;
  ALPA_ASSIGN_OR_RETURN(const int64_t replaced, ReplaceAlpaMarkers(loss));
  if (replaced == 0) return stats;
  stats.removed = replaced;
  // Our markers as the data flow placed them give every instruction its layer; a value read
  // several layers later then gets its chain, as automatic layers do.
  const ForwardLayers layers = LayersFromBoundaries(loss);
  std::map<const Instruction*, int64_t> layer_of;
  const std::vector<Instruction*> order = loss.MakePostOrder();
  for (size_t t = 0; t < order.size(); ++t) layer_of[order[t]] = layers.layer_of[t];
  ALPA_RETURN_IF_ERROR(RemoveForwardMarkers(loss).status());
  std::vector<int64_t> unmarked_layers;
  for (const Instruction* instruction : loss.MakePostOrder()) {
    unmarked_layers.push_back(layer_of.at(instruction));
  }
  stats.inserted = MarkerChains(loss, unmarked_layers).Run();
  return stats;
}

Result<LayerMarkingStats> MarkAutoLayers(ir::Computation& loss, int64_t num_layers, double eps) {
  LayerMarkingStats stats;
  ALPA_ASSIGN_OR_RETURN(stats.removed, RemoveForwardMarkers(loss));
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> layer_of,
                        ClusterComputationIntoLayers(loss, num_layers, eps));
  stats.inserted = MarkerChains(loss, layer_of).Run();
  return stats;
}

}  // namespace alpa::pipeline
