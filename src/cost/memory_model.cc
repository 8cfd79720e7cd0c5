#include "cost/memory_model.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ir/layer_boundary.h"
#include "ir/value_tag.h"
#include "support/status.h"

namespace alpa::cost {
namespace {

using ir::Instruction;

struct CategoryNames {
  std::string_view name;
  std::string_view key;
};
constexpr std::array<CategoryNames, kNumMemoryCategories> kCategoryNames = {{
    {"weights", "weights"},
    {"optimizer state", "optimizer_state"},
    {"gradients", "gradients"},
    {"saved activations", "saved_activations"},
    {"temporaries", "temporaries"},
    {"input batch", "batch"},
    {"other parameters", "other_parameters"},
    {"collective buffers", "collective_buffers"},
}};

// The computation as step-indexed plain data: who reads each step's value.
struct Graph {
  const Liveness& liveness;
  std::vector<std::vector<int64_t>> readers;  // readers[t]: steps reading order[t], ascending

  explicit Graph(const Liveness& live)
      : liveness(live), readers(static_cast<size_t>(live.steps())) {
    for (int64_t t = 0; t < live.steps(); ++t) {
      for (const Instruction* operand : At(t).operands()) {
        std::vector<int64_t>& of = readers[static_cast<size_t>(live.StepOf(operand))];
        if (of.empty() || of.back() != t) of.push_back(t);
      }
    }
  }
  const Instruction& At(int64_t t) const { return *liveness.order[static_cast<size_t>(t)]; }
  const std::vector<int64_t>& ReadersOf(int64_t t) const { return readers[static_cast<size_t>(t)]; }
};

// Marks every step carrying `tag` and every step it is computed from (its operands, transitively).
std::vector<bool> TaggedAndAncestors(const Graph& graph, ir::ValueTag tag) {
  std::vector<bool> marked(graph.readers.size(), false);
  for (int64_t t = graph.liveness.steps() - 1; t >= 0; --t) {
    bool reaches = ir::GetValueTag(graph.At(t)) == tag;
    for (int64_t reader : graph.ReadersOf(t))
      reaches = reaches || marked[static_cast<size_t>(reader)];
    marked[static_cast<size_t>(t)] = reaches;
  }
  return marked;
}

std::vector<ParameterRole> RolesByStep(const ir::Computation& computation, const Liveness& liveness,
                                       const std::vector<ParameterRole>& roles) {
  const std::vector<Instruction*> parameters = computation.parameters();
  ALPA_CHECK(roles.size() <= parameters.size(), "{} parameter roles for the {} parameters of %{}",
             roles.size(), parameters.size(), computation.name());
  std::vector<ParameterRole> by_step(static_cast<size_t>(liveness.steps()), ParameterRole::kOther);
  for (size_t i = 0; i < roles.size(); ++i) {
    by_step[static_cast<size_t>(liveness.StepOf(parameters[i]))] = roles[i];
  }
  return by_step;
}

std::vector<Pass> Passes(const Graph& graph) {
  const std::vector<bool> to_loss = TaggedAndAncestors(graph, ir::ValueTag::kLoss);
  const std::vector<bool> to_gradient = TaggedAndAncestors(graph, ir::ValueTag::kGradient);
  const std::vector<bool> to_input_gradient =
      TaggedAndAncestors(graph, ir::ValueTag::kInputGradient);
  std::vector<Pass> passes(graph.readers.size(), Pass::kOther);
  for (size_t t = 0; t < passes.size(); ++t) {
    if (graph.At(static_cast<int64_t>(t)).opcode() == ir::Opcode::kParameter) continue;
    if (to_loss[t]) {
      passes[t] = Pass::kForward;
    } else if (to_gradient[t] || to_input_gradient[t]) {
      passes[t] = Pass::kBackward;
    }
  }
  return passes;
}

// Forward layers by the rules of the header; -1 for values outside the forward pass.
std::vector<int64_t> ForwardLayers(const Graph& graph, const std::vector<ValueInfo>& values) {
  const int64_t steps = graph.liveness.steps();
  std::vector<int64_t> layers(static_cast<size_t>(steps), -1);
  auto forward = [&](int64_t t) { return values[static_cast<size_t>(t)].pass == Pass::kForward; };
  auto marker = [&](int64_t t) -> std::optional<int64_t> {
    std::optional<ir::LayerBoundary> boundary = ir::AsLayerBoundary(graph.At(t));
    if (!boundary.has_value() || boundary->backward) return std::nullopt;
    return boundary->layer;
  };
  for (int64_t t = 0; t < steps; ++t) {  // reached from a marker: from the operands
    if (!forward(t)) continue;
    int64_t& layer = layers[static_cast<size_t>(t)];
    if (std::optional<int64_t> k = marker(t)) {
      layer = *k + 1;
      continue;
    }
    for (const Instruction* operand : graph.At(t).operands()) {
      layer = std::max(layer, layers[static_cast<size_t>(graph.liveness.StepOf(operand))]);
    }
  }
  for (int64_t t = steps - 1; t >= 0; --t) {  // reached from no marker: from the readers
    if (!forward(t) || layers[static_cast<size_t>(t)] >= 0) continue;
    int64_t layer = std::numeric_limits<int64_t>::max();
    for (int64_t reader : graph.ReadersOf(t)) {
      if (!forward(reader)) continue;
      const std::optional<int64_t> k = marker(reader);
      layer = std::min(layer, k ? *k : layers[static_cast<size_t>(reader)]);
    }
    layers[static_cast<size_t>(t)] = layer == std::numeric_limits<int64_t>::max() ? 0 : layer;
  }
  return layers;
}

MemoryCategory ParameterCategory(ParameterRole role) {
  switch (role) {
    case ParameterRole::kWeight:
      return MemoryCategory::kWeights;
    case ParameterRole::kOptimizerState:
      return MemoryCategory::kOptimizerState;
    case ParameterRole::kBatch:
      return MemoryCategory::kBatch;
    case ParameterRole::kOther:
      break;
  }
  return MemoryCategory::kOtherParameters;
}

// Categories of the non-parameter values: gradients by tag, then saved activations (forward,
// computed from the data, read by the backward pass, perhaps through aliases), then temporaries.
void Categorize(const Graph& graph, const std::vector<ParameterRole>& roles,
                std::vector<ValueInfo>& values) {
  const int64_t steps = graph.liveness.steps();
  std::vector<bool> from_data(static_cast<size_t>(steps), false);
  for (int64_t t = 0; t < steps; ++t) {
    const Instruction& instruction = graph.At(t);
    bool data = false;
    if (instruction.opcode() == ir::Opcode::kParameter) {
      const ParameterRole role = roles[static_cast<size_t>(t)];
      data = role == ParameterRole::kBatch || role == ParameterRole::kOther;
    }
    for (const Instruction* operand : instruction.operands()) {
      data = data || from_data[static_cast<size_t>(graph.liveness.StepOf(operand))];
    }
    from_data[static_cast<size_t>(t)] = data;
  }
  std::vector<bool> read_by_backward(static_cast<size_t>(steps), false);
  for (int64_t t = steps - 1; t >= 0; --t) {
    bool read = false;
    for (int64_t reader : graph.ReadersOf(t)) {
      read = read || values[static_cast<size_t>(reader)].pass == Pass::kBackward ||
             (graph.liveness.buffers[static_cast<size_t>(reader)].alias &&
              read_by_backward[static_cast<size_t>(reader)]);
    }
    read_by_backward[static_cast<size_t>(t)] = read;
  }
  for (int64_t t = 0; t < steps; ++t) {
    const Instruction& instruction = graph.At(t);
    ValueInfo& value = values[static_cast<size_t>(t)];
    if (instruction.opcode() == ir::Opcode::kParameter) {
      value.category = ParameterCategory(roles[static_cast<size_t>(t)]);
    } else if (ir::GetValueTag(instruction) == ir::ValueTag::kGradient) {
      value.category = MemoryCategory::kGradients;
    } else if (value.pass == Pass::kForward && from_data[static_cast<size_t>(t)] &&
               read_by_backward[static_cast<size_t>(t)]) {
      value.category = MemoryCategory::kSavedActivations;
    }
  }
}

}  // namespace

std::string_view PassName(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackward:
      return "backward";
    case Pass::kOther:
      break;
  }
  return "other";
}

std::string_view MemoryCategoryName(MemoryCategory category) {
  return kCategoryNames[static_cast<size_t>(category)].name;
}

std::string_view MemoryCategoryKey(MemoryCategory category) {
  return kCategoryNames[static_cast<size_t>(category)].key;
}

int64_t MemoryBreakdown::total() const {
  int64_t sum = 0;
  for (int64_t value : bytes) sum += value;
  return sum;
}

int64_t MemoryModel::StaticBytes() const {
  return at_peak[MemoryCategory::kWeights] + at_peak[MemoryCategory::kOptimizerState] +
         gradient_bytes;
}

int64_t MemoryModel::SavedActivationBytesPerMicroBatch(int64_t begin_layer,
                                                       int64_t end_layer) const {
  int64_t sum = 0;
  for (size_t t = 0; t < values.size(); ++t) {
    const ValueInfo& value = values[t];
    if (value.category == MemoryCategory::kSavedActivations && value.layer >= begin_layer &&
        value.layer < end_layer) {
      sum += liveness.buffers[t].bytes;
    }
  }
  return (sum + num_micro_batches - 1) / num_micro_batches;  // ceil(sum / M)
}

MemoryModel BuildMemoryModel(const ir::Computation& computation,
                             const MemoryModelOptions& options) {
  ALPA_CHECK(options.num_micro_batches >= 1, "num_micro_batches is {}", options.num_micro_batches);
  MemoryModel model;
  model.num_micro_batches = options.num_micro_batches;
  model.liveness = options.order.empty()
                       ? ComputeLiveness(computation, options.bytes, *options.fused,
                                         options.donated, options.lowering)
                       : ComputeLiveness(computation, options.order, options.bytes, *options.fused,
                                         options.donated, options.lowering);
  const Graph graph(model.liveness);
  const std::vector<ParameterRole> roles =
      RolesByStep(computation, model.liveness, options.parameter_roles);

  model.values.resize(static_cast<size_t>(model.liveness.steps()));
  const std::vector<Pass> passes = Passes(graph);
  for (size_t t = 0; t < passes.size(); ++t) model.values[t].pass = passes[t];
  const std::vector<int64_t> layers = ForwardLayers(graph, model.values);
  for (size_t t = 0; t < layers.size(); ++t) {
    model.values[t].layer = layers[t];
    model.num_layers = std::max(model.num_layers, layers[t] + 1);  // the last layer is L
  }
  Categorize(graph, roles, model.values);

  for (int64_t t = 0; t < model.liveness.steps(); ++t) {
    const BufferInterval& buffer = model.liveness.buffers[static_cast<size_t>(t)];
    const ValueInfo& value = model.values[static_cast<size_t>(t)];
    if (model.liveness.held_at_peak[static_cast<size_t>(t)]) {
      model.at_peak[value.category] += buffer.bytes;
    }
    if (value.category == MemoryCategory::kSavedActivations) {
      model.saved_activation_bytes += buffer.bytes;
    }
    if (value.category == MemoryCategory::kGradients &&
        std::none_of(graph.ReadersOf(t).begin(), graph.ReadersOf(t).end(), [&](int64_t reader) {
          return model.values[static_cast<size_t>(reader)].category == MemoryCategory::kGradients;
        })) {
      model.gradient_bytes += buffer.bytes;
    }
  }
  model.at_peak[MemoryCategory::kCollectiveBuffers] = model.liveness.peak_lowering_bytes;
  ALPA_CHECK(model.at_peak.total() == model.liveness.peak_bytes,
             "the breakdown ({} bytes) does not add up to the peak ({} bytes)",
             model.at_peak.total(), model.liveness.peak_bytes);
  return model;
}

}  // namespace alpa::cost
