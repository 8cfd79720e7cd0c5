#include "pipeline/stage_slicing.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "ir/builder.h"
#include "ir/layer_boundary.h"

namespace alpa::pipeline {
namespace {

using ir::Instruction;

std::map<const Instruction*, int64_t> PositionOf(const std::vector<Instruction*>& order) {
  std::map<const Instruction*, int64_t> position;
  for (size_t t = 0; t < order.size(); ++t) position[order[t]] = static_cast<int64_t>(t);
  return position;
}

// Values that depend on no parameter (constants, iotas, masks built from them): every stage
// that reads one computes it itself rather than receiving it.
std::vector<bool> ConstantLike(const std::vector<Instruction*>& order,
                               const std::map<const Instruction*, int64_t>& position) {
  std::vector<bool> constant(order.size(), false);
  for (size_t t = 0; t < order.size(); ++t) {
    const Instruction& instruction = *order[t];
    if (instruction.opcode() == ir::Opcode::kParameter) continue;
    constant[t] =
        std::all_of(instruction.operands().begin(), instruction.operands().end(),
                    [&](const Instruction* operand) { return constant[position.at(operand)]; });
  }
  return constant;
}

// A copy of a called scalar reducer (add, maximum, ...) in the stage module.
Result<ir::Computation*> CopyReducer(const ir::Computation& callee, const Instruction& caller,
                                     ir::ModuleBuilder& mb) {
  if (ir::Computation* copy = mb.CopyScalarReducer(callee)) return copy;
  return Unimplemented("%{} calls %{}, which is not a scalar reducer; stages copy only those",
                       caller.name(), callee.name());
}

// The attributes of `marker` with its layer renumbered to `layer`.
ir::Attributes WithLayer(const Instruction& marker, int64_t layer) {
  ir::Attributes attributes = marker.attributes();
  for (auto& [key, value] : attributes.frontend_attributes) {
    if (key == "layer") value = std::to_string(layer);
  }
  return attributes;
}

class StageBuilder {
 public:
  StageBuilder(const ir::Computation& entry, const std::vector<int64_t>& weights,
               const ForwardLayers& layers, int64_t first, int64_t last)
      : order_(entry.MakePostOrder()),
        position_(PositionOf(order_)),
        constant_(ConstantLike(order_, position_)),
        weights_(weights.begin(), weights.end()),
        layers_(layers),
        first_(first),
        last_(last),
        mb_("stage"),
        b_(mb_.NewComputation("stage_loss")) {}

  Result<StageLoss> Build(const Instruction* loss_root) {
    for (size_t t = 0; t < order_.size(); ++t) {
      if (InRange(t) && !constant_[t] && order_[t]->opcode() != ir::Opcode::kParameter) {
        ALPA_RETURN_IF_ERROR(Emit(t));
      }
    }
    std::vector<Instruction*> terms;
    if (InRange(position_.at(loss_root))) {
      stage_.has_loss = true;
      terms.push_back(copy_.at(loss_root));
    }
    const ir::DType loss_type = loss_root->shape().dtype();
    for (const Instruction* sent : SentValues()) {
      Instruction* y = copy_.at(sent);
      y->mutable_attributes().frontend_attributes.emplace_back(std::string(kSentAttribute),
                                                               std::to_string(stage_.sent.size()));
      stage_.sent.push_back(sent->name());
      stage_.output_bytes += y->shape().ByteSize();
      if (!ir::IsFloating(y->shape().dtype())) continue;  // nothing flows back
      stage_.cotangent_of.push_back(static_cast<int64_t>(stage_.sent.size()) - 1);
      Instruction* ct = NewParameter(y->shape(), stage_.cotangents, -1);
      std::vector<int64_t> all(static_cast<size_t>(y->shape().rank()));
      for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
      Instruction* dot = b_.Sum(b_.Multiply(y, ct), all);
      terms.push_back(y->shape().dtype() == loss_type ? dot : b_.Convert(dot, loss_type));
    }
    if (terms.empty()) {
      return InvalidArgument("layers {}..{} compute nothing the loss depends on", first_, last_);
    }
    Instruction* root = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) root = b_.Add(root, terms[i]);
    ALPA_ASSIGN_OR_RETURN(ir::Computation * computation, b_.Build(root));
    computation->RemoveDeadInstructions();
    ALPA_ASSIGN_OR_RETURN(stage_.module, mb_.Build(computation));
    return std::move(stage_);
  }

 private:
  bool InRange(size_t t) const {
    const int64_t layer = layers_.layer_of[t];
    return layer >= first_ && layer <= last_;
  }

  Instruction* NewParameter(const ir::Shape& shape, std::vector<int64_t>& kind,
                            int64_t model_parameter, std::string received = "") {
    const int64_t number = static_cast<int64_t>(stage_.model_parameter.size());
    kind.push_back(number);
    stage_.model_parameter.push_back(model_parameter);
    stage_.received.push_back(std::move(received));
    return b_.Parameter(number, shape, "p" + std::to_string(number));
  }

  // The stage's value of order_[t]: its copy, a parameter for what comes from outside the stage,
  // a fresh copy of a constant-like value.
  Result<Instruction*> ValueOf(size_t t) {
    auto it = copy_.find(order_[t]);
    if (it != copy_.end()) return it->second;
    const Instruction& value = *order_[t];
    if (value.opcode() == ir::Opcode::kParameter) {
      const int64_t number = value.attributes().parameter_number;
      const bool weight = weights_.count(number) > 0;
      copy_[&value] = NewParameter(value.shape(), weight ? stage_.weights : stage_.batch, number);
    } else if (constant_[t]) {
      ALPA_RETURN_IF_ERROR(Emit(t));
    } else {  // computed by an earlier layer
      const bool differentiable = value.shape().IsArray() && ir::IsFloating(value.shape().dtype());
      copy_[&value] = NewParameter(
          value.shape(), differentiable ? stage_.activations : stage_.batch, -1, value.name());
      stage_.input_bytes += value.shape().ByteSize();
    }
    return copy_.at(&value);
  }

  Status Emit(size_t t) {
    const Instruction& instruction = *order_[t];
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction.operands()) {
      ALPA_ASSIGN_OR_RETURN(Instruction * value,
                            ValueOf(static_cast<size_t>(position_.at(operand))));
      operands.push_back(value);
    }
    std::vector<ir::Computation*> callees;
    for (const ir::Computation* callee : instruction.called_computations()) {
      ALPA_ASSIGN_OR_RETURN(ir::Computation * reducer, CopyReducer(*callee, instruction, mb_));
      callees.push_back(reducer);
    }
    const std::optional<ir::LayerBoundary> marker = ir::AsLayerBoundary(instruction);
    copy_[&instruction] = b_.AddInstruction(
        instruction.opcode(), std::move(operands),
        marker ? WithLayer(instruction, marker->layer - first_) : instruction.attributes(),
        std::move(callees), instruction.shape(), "v" + std::to_string(emitted_++));
    return b_.status();
  }

  // The stage's values that instructions of later layers read, in post order.
  std::vector<const Instruction*> SentValues() const {
    std::set<const Instruction*> sent;
    for (size_t t = 0; t < order_.size(); ++t) {
      if (layers_.layer_of[t] <= last_ || constant_[t]) continue;
      for (const Instruction* operand : order_[t]->operands()) {
        const size_t p = static_cast<size_t>(position_.at(operand));
        if (InRange(p) && !constant_[p] && operand->opcode() != ir::Opcode::kParameter) {
          sent.insert(operand);
        }
      }
    }
    std::vector<const Instruction*> ordered(sent.begin(), sent.end());
    std::sort(ordered.begin(), ordered.end(), [&](const Instruction* a, const Instruction* b) {
      return position_.at(a) < position_.at(b);
    });
    return ordered;
  }

  std::vector<Instruction*> order_;
  std::map<const Instruction*, int64_t> position_;
  std::vector<bool> constant_;
  std::set<int64_t> weights_;
  const ForwardLayers& layers_;
  int64_t first_, last_;
  ir::ModuleBuilder mb_;
  ir::ComputationBuilder b_;
  std::map<const Instruction*, Instruction*> copy_;
  int64_t emitted_ = 0;
  StageLoss stage_;
};

}  // namespace

ForwardLayers LayersFromBoundaries(const ir::Computation& loss) {
  const std::vector<Instruction*> order = loss.MakePostOrder();
  const std::map<const Instruction*, int64_t> position = PositionOf(order);
  ForwardLayers layers;
  layers.layer_of.assign(order.size(), -1);
  // Forward: the layer after the last marker on the way from the inputs.
  for (size_t t = 0; t < order.size(); ++t) {
    int64_t& layer = layers.layer_of[t];
    if (const std::optional<ir::LayerBoundary> marker = ir::AsLayerBoundary(*order[t])) {
      layer = marker->layer;
      continue;
    }
    for (const Instruction* operand : order[t]->operands()) {
      const int64_t from = layers.layer_of[static_cast<size_t>(position.at(operand))];
      if (from < 0) continue;
      const std::optional<ir::LayerBoundary> ended = ir::AsLayerBoundary(*operand);
      layer = std::max(layer, ended ? ended->layer + 1 : from);
    }
  }
  // Backward: values reached from no marker join their first reader.
  std::vector<int64_t> first_reader(order.size(), std::numeric_limits<int64_t>::max());
  for (size_t t = order.size(); t-- > 0;) {
    int64_t& layer = layers.layer_of[t];
    if (layer < 0)
      layer = first_reader[t] == std::numeric_limits<int64_t>::max() ? 0 : first_reader[t];
    for (const Instruction* operand : order[t]->operands()) {
      int64_t& reader = first_reader[static_cast<size_t>(position.at(operand))];
      reader = std::min(reader, layer);
    }
  }
  for (int64_t layer : layers.layer_of) layers.num_layers = std::max(layers.num_layers, layer + 1);
  return layers;
}

Result<StageLoss> SliceStageLoss(const ir::Module& loss, const std::vector<int64_t>& weights,
                                 const ForwardLayers& layers, int64_t first, int64_t last) {
  const ir::Computation* entry = loss.entry();
  if (entry == nullptr) return InvalidArgument("module {} has no entry computation", loss.name());
  if (first < 0 || last < first || last >= layers.num_layers) {
    return InvalidArgument("layers {}..{}: the loss has layers 0..{}", first, last,
                           layers.num_layers - 1);
  }
  if (layers.layer_of.size() != static_cast<size_t>(entry->instruction_count())) {
    return InvalidArgument("the layer assignment has {} entries for {} instructions",
                           layers.layer_of.size(), entry->instruction_count());
  }
  return StageBuilder(*entry, weights, layers, first, last).Build(entry->root());
}

}  // namespace alpa::pipeline
