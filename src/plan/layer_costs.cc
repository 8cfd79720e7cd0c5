#include "plan/layer_costs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "cluster/mesh.h"
#include "cost/flop_count.h"
#include "cost/memory_model.h"
#include "hlo/printer.h"
#include "ir/value_tag.h"
#include "pipeline/stage_slicing.h"
#include "plan/pipelined_step_memory.h"
#include "plan/stage_composition.h"
#include "sharding/hlo_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/strategy_util.h"

namespace alpa::plan {
namespace {

// The instructions whose values only go into the weights' gradients: gradient-tagged values,
// and those all of whose users are such. With gradient accumulation their collectives run once
// per step, on the sums (Alpa skips the gradient synchronisation of all micro-batches but the
// last), while the rest of the backward pass (the activations' cotangents) runs per micro-batch.
std::set<const ir::Instruction*> GradientOnly(const ir::Computation& entry) {
  std::map<const ir::Instruction*, std::vector<const ir::Instruction*>> users;
  const std::vector<ir::Instruction*> order = entry.MakePostOrder();
  for (const ir::Instruction* instruction : order) {
    for (const ir::Instruction* operand : instruction->operands()) {
      users[operand].push_back(instruction);
    }
  }
  std::set<const ir::Instruction*> only;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Instruction* instruction = *it;
    const std::vector<const ir::Instruction*>& readers = users[instruction];
    if (ir::GetValueTag(*instruction) == ir::ValueTag::kGradient ||
        (!readers.empty() &&
         std::all_of(readers.begin(), readers.end(),
                     [&](const ir::Instruction* r) { return only.count(r); }))) {
      only.insert(instruction);
    }
  }
  return only;
}

// The layouts the layer's plan gives the values crossing its boundaries (LayerCost): its sent
// values as computed, its received activations and cotangents as taken, its activations'
// gradients as returned (the step's results after t + 1, autodiff/train_step.h).
Status RecordBoundaryLayouts(const pipeline::StageLoss& stage, const StageStep& layer,
                             const sharding::ShardingSolution& solution, LayerCost& cost) {
  const ir::Computation& entry = *layer.step->entry();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  auto layout = [&](const ir::Instruction& value) {
    const int64_t node = solution.graph.NodeOf(value);
    return node < 0 ? sharding::ShardingSpec::Replicated(value.shape().rank())
                    : solution.Chosen(node).output.at(0);
  };
  auto parameter_layout = [&](int64_t loss_parameter) {
    return layout(*parameters[static_cast<size_t>(
        layer.step_parameter[static_cast<size_t>(loss_parameter)])]);
  };
  const std::vector<ir::Instruction*> sent =
      SentValues(entry, static_cast<int64_t>(stage.sent.size()));
  for (size_t j = 0; j < sent.size(); ++j) {
    if (sent[j] == nullptr) return Internal("the layer's train step lost sent value {}", j);
    cost.sent_specs.push_back(layout(*sent[j]));
  }
  cost.cotangent_specs.resize(stage.sent.size());
  for (size_t i = 0; i < stage.cotangents.size(); ++i) {
    cost.cotangent_specs[static_cast<size_t>(stage.cotangent_of[i])] =
        parameter_layout(stage.cotangents[i]);
  }
  // The results: (loss, W'..., state'..., t + 1, the activations' gradients...), one carried
  // value after the loss for each parameter that is not of the batch.
  const int64_t carried = std::count_if(layer.roles.begin(), layer.roles.end(), [](auto role) {
    return role != cost::ParameterRole::kBatch;
  });
  for (size_t a = 0; a < stage.activations.size(); ++a) {
    cost.received_specs.push_back(parameter_layout(stage.activations[a]));
    cost.input_gradient_specs.push_back(
        layout(*entry.root()->operand(1 + carried + static_cast<int64_t>(a))));
  }
  return Status::Ok();
}

// A buffer's bytes as the memory model holds it (a value kept inside kernels holds none).
int64_t BufferBytes(const cost::MemoryModel& memory, const ir::Instruction& instruction) {
  return memory.liveness.buffers[static_cast<size_t>(memory.liveness.StepOf(&instruction))].bytes;
}

// What each weight adds to the layer's static bytes and update (LayerCost::weight_static_bytes,
// weight_update_s): of the instructions its next value and next optimizer state are computed
// from, the update's work and the communication of its gradient; its master copy, its state and
// its gradient (the gradient-tagged value nearest its update).
Status AttributeToWeights(const StageStep& layer, const sharding::ShardingSolution& solution,
                          const cost::MemoryModel& memory,
                          const std::set<const ir::Instruction*>& gradient_only, LayerCost& cost) {
  const ir::Computation& entry = *layer.step->entry();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  const int64_t weights =
      std::count(layer.roles.begin(), layer.roles.end(), cost::ParameterRole::kWeight);
  const int64_t states =
      std::count(layer.roles.begin(), layer.roles.end(), cost::ParameterRole::kOptimizerState);
  if (weights == 0 || states % weights != 0) return Status::Ok();
  const int64_t states_per_weight = states / weights;
  // Parameters: W..., state..., t; results: (loss, W'..., state'..., t + 1, ...).
  std::vector<const ir::Instruction*> next_weights;
  for (int64_t i = 0; i < weights; ++i) next_weights.push_back(entry.root()->operand(1 + i));
  const std::vector<const ir::Instruction*> gradients =
      autodiff::UpdateGradients(entry, next_weights);
  for (int64_t i = 0; i < weights; ++i) {
    std::vector<const ir::Instruction*> stack = {next_weights[static_cast<size_t>(i)]};
    int64_t& static_bytes = cost.weight_static_bytes.emplace_back(
        BufferBytes(memory, *parameters[static_cast<size_t>(i)]));
    for (int64_t s = 0; s < states_per_weight; ++s) {
      const int64_t state = weights + i * states_per_weight + s;
      stack.push_back(entry.root()->operand(1 + state));
      static_bytes += BufferBytes(memory, *parameters[static_cast<size_t>(state)]);
    }
    int64_t& gradient_bytes = cost.weight_gradient_bytes.emplace_back(0);
    sharding::ShardingSpec& gradient_spec = cost.weight_gradient_specs.emplace_back(
        sharding::ShardingSpec::Replicated(parameters[static_cast<size_t>(i)]->shape().rank()));
    if (const ir::Instruction* gradient = gradients[static_cast<size_t>(i)]) {
      gradient_bytes = BufferBytes(memory, *gradient);
      static_bytes += gradient_bytes;
      if (const int64_t node = solution.graph.NodeOf(*gradient); node >= 0) {
        ALPA_ASSIGN_OR_RETURN(sharding::LeafSpecs specs,
                              sharding::LayoutBeforeCollectives(*gradient, solution.Chosen(node)));
        gradient_spec = specs.at(0);
      }
    }
    double& update_s = cost.weight_update_s.emplace_back(0);
    std::set<const ir::Instruction*> seen;
    while (!stack.empty()) {
      const ir::Instruction* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      for (const ir::Instruction* operand : x->operands()) stack.push_back(operand);
      const int64_t node = solution.graph.NodeOf(*x);
      if (node < 0) continue;
      const sharding::NodeCost& node_cost = solution.estimate.nodes[static_cast<size_t>(node)];
      const bool update =
          memory.values[static_cast<size_t>(memory.liveness.StepOf(x))].pass == cost::Pass::kOther;
      if (update) update_s += node_cost.compute_seconds + node_cost.resharding_seconds;
      if (update || gradient_only.count(x)) update_s += node_cost.communication_seconds;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<LayerCost> CostOfStagePlan(const pipeline::StageLoss& stage, const StageStep& layer,
                                  const sharding::ShardingSolution& solution,
                                  const std::vector<int64_t>& mesh_shape) {
  const ir::Computation& entry = *layer.step->entry();
  const sharding::StrategyGraph& graph = solution.graph;
  const cost::MemoryModel memory = sharding::SolutionMemoryModel(entry, solution, layer.roles);

  const std::set<const ir::Instruction*> gradient_only = GradientOnly(entry);
  LayerCost cost;
  cost.fits = true;
  const sharding::ShardingEstimate& estimate = solution.estimate;
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const ir::Instruction* instruction = graph.nodes[v].instruction;
    const sharding::NodeCost& node = estimate.nodes[v];
    const cost::Pass pass =
        memory.values[static_cast<size_t>(memory.liveness.StepOf(instruction))].pass;
    const bool gradient = gradient_only.count(instruction) > 0;
    double& work = pass == cost::Pass::kForward    ? cost.forward_s
                   : pass == cost::Pass::kBackward ? cost.backward_s
                                                   : cost.update_s;
    work += node.compute_seconds + node.resharding_seconds;
    (gradient ? cost.update_s : work) += node.communication_seconds;
  }
  cost.update_s += estimate.carried_seconds;
  ALPA_RETURN_IF_ERROR(AttributeToWeights(layer, solution, memory, gradient_only, cost));
  cost.static_bytes = memory.StaticBytes();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  auto parameters_of = [&](const std::vector<int64_t>& numbers) {
    std::vector<const ir::Instruction*> of;
    for (int64_t p : numbers) of.push_back(parameters[static_cast<size_t>(p)]);
    return of;
  };
  std::vector<const ir::Instruction*> sent;
  for (const ir::Instruction* value : SentValues(entry, std::ssize(stage.sent))) {
    if (value != nullptr) sent.push_back(value);
  }
  const PipelinedStepMemory held = PipelinedMemoryOf(
      entry, memory, parameters_of(layer.held_inputs), parameters_of(layer.cotangent_inputs), sent);
  cost.activation_bytes = held.activation_bytes;
  cost.recomputed_bytes = held.recomputed_bytes;
  cost.peak_bytes = estimate.peak_memory_bytes;
  cost.task_peak_bytes = held.task_peak_bytes;
  cost.update_temporary_bytes = held.update_temporary_bytes;
  cost.update_result_bytes = held.update_result_bytes;
  // The estimate's peak bounds the task's (the solver's figure; the memory model's usage can
  // count a few buffers more).
  cost.task_peak_bytes = std::min(cost.task_peak_bytes, cost.peak_bytes);
  cost.collectives = estimate.communication.count;
  // The step's first parameters are the layer's weights (autodiff/train_step.h).
  for (size_t p = 0; p < layer.roles.size() && layer.roles[p] == cost::ParameterRole::kWeight;
       ++p) {
    const int64_t node = graph.NodeOf(*parameters[p]);
    cost.weight_shardings.push_back(
        node < 0 ? "{replicated}"
                 : sharding::ToHloShardingText(solution.Chosen(node).output, mesh_shape));
  }
  ALPA_RETURN_IF_ERROR(RecordBoundaryLayouts(stage, layer, solution, cost));
  return cost;
}

Result<cluster::LogicalMesh> LogicalMeshOf(const cluster::ClusterSpec& spec,
                                           const MeshConfig& config) {
  const std::vector<cluster::HostType> types = cluster::HostTypes(spec);
  const int64_t first_host = types[static_cast<size_t>(config.submesh.host_type)].hosts.front();
  ALPA_ASSIGN_OR_RETURN(cluster::PhysicalMesh physical,
                        cluster::HostBlockMesh(spec, first_host, HostsOf(config.submesh),
                                               config.submesh.shape.back()));
  return cluster::MakeLogicalMesh(spec, physical, config.logical_shape);
}

Result<StageStep> BuildStageStep(const pipeline::StageLoss& stage,
                                 const std::vector<int64_t>& model_weights,
                                 autodiff::TrainStepOptions training) {
  training.num_micro_batches = 1;
  if (training.update != nullptr) {
    std::vector<int64_t> program_weights;
    for (int64_t w : stage.weights) {
      const auto k = static_cast<size_t>(std::find(model_weights.begin(), model_weights.end(),
                                                   stage.model_parameter[static_cast<size_t>(w)]) -
                                         model_weights.begin());
      if (k == model_weights.size()) {
        return Internal("the stage's weight {} is none of the model's", w);
      }
      program_weights.push_back(training.update_weights.empty() ? static_cast<int64_t>(k)
                                                                : training.update_weights[k]);
    }
    training.update_weights = std::move(program_weights);
  }
  StageStep layer;
  layer.training = training;
  ALPA_ASSIGN_OR_RETURN(layer.step, autodiff::BuildTrainStep(*stage.module, stage.weights, training,
                                                             stage.activations));
  const std::vector<autodiff::StepParameter> layout =
      autodiff::StepParameterLayout(*stage.module, stage.weights, training);
  for (autodiff::StepParameter kind : layout) layer.roles.push_back(RoleOfStepParameter(kind));
  // The step's batch parameters are the loss's non-weights, in order (autodiff/train_step.h).
  std::set<int64_t> held(stage.activations.begin(), stage.activations.end());
  held.insert(stage.batch.begin(), stage.batch.end());
  const std::set<int64_t> cotangents(stage.cotangents.begin(), stage.cotangents.end());
  // The weights come first, in stage.weights order.
  int64_t step_parameter =
      std::find(layout.begin(), layout.end(), autodiff::StepParameter::kBatch) - layout.begin();
  for (int64_t p = 0; p < stage.module->entry()->parameter_count(); ++p) {
    const auto weight = std::find(stage.weights.begin(), stage.weights.end(), p);
    if (weight != stage.weights.end()) {
      layer.step_parameter.push_back(weight - stage.weights.begin());
      continue;
    }
    if (held.count(p)) layer.held_inputs.push_back(step_parameter);
    if (cotangents.count(p)) layer.cotangent_inputs.push_back(step_parameter);
    layer.step_parameter.push_back(step_parameter++);
  }
  ALPA_ASSIGN_OR_RETURN(layer.parameters,
                        sharding::StepParameters(*layer.step->entry(), layer.roles,
                                                 autodiff::StepNextValueElements(layout)));
  // The step's results: its loss, then the next values, then the activations' gradients
  // (autodiff/train_step.h).
  const ir::Instruction* root = layer.step->entry()->root();
  if (root->opcode() != ir::Opcode::kTuple) {
    return Internal("the stage's train step returns no tuple of results");
  }
  const auto results = static_cast<size_t>(root->operand_count());
  if (stage.has_loss) layer.whole_values.push_back(root->operand(0)->name());
  for (size_t r = results - std::min(results, stage.activations.size()); r < results; ++r) {
    layer.whole_values.push_back(root->operand(static_cast<int64_t>(r))->name());
  }
  for (const ir::Instruction* value : SentValues(*layer.step->entry(), std::ssize(stage.sent))) {
    if (value != nullptr) layer.whole_values.push_back(value->name());
  }
  ALPA_ASSIGN_OR_RETURN(cost::FlopCount flops, cost::CountFlops(*layer.step->entry()));
  layer.flops = flops.flops;
  return layer;
}

std::vector<ir::Instruction*> SentValues(const ir::Computation& step, int64_t sent) {
  std::vector<ir::Instruction*> values(static_cast<size_t>(sent), nullptr);
  for (const std::unique_ptr<ir::Instruction>& instruction : step.instructions()) {
    for (const auto& [key, value] : instruction->attributes().frontend_attributes) {
      if (key != pipeline::kSentAttribute) continue;
      const int64_t j = std::stoll(value);
      if (j >= 0 && j < sent && values[static_cast<size_t>(j)] == nullptr) {
        values[static_cast<size_t>(j)] = instruction.get();
      }
    }
  }
  return values;
}

sharding::AutoShardingOptions StageShardingOptions(const StageStep& layer, const MeshConfig& config,
                                                   sharding::AutoShardingOptions options) {
  options.force_batch_axis = config.force_batch ? 0 : -1;
  options.batch_parameters.clear();
  options.next_values.clear();
  for (const sharding::MethodParameter& parameter : layer.parameters) {
    if (parameter.role == cost::ParameterRole::kBatch) {
      options.batch_parameters.push_back(parameter.name);
    }
    if (!parameter.next_value.empty()) options.next_values[parameter.name] = parameter.next_value;
  }
  options.whole_values = layer.whole_values;
  return options;
}

cost::ParameterRole RoleOfStepParameter(autodiff::StepParameter kind) {
  switch (kind) {
    case autodiff::StepParameter::kWeight:
      return cost::ParameterRole::kWeight;
    case autodiff::StepParameter::kOptimizerState:
      return cost::ParameterRole::kOptimizerState;
    case autodiff::StepParameter::kBatch:
      return cost::ParameterRole::kBatch;
    case autodiff::StepParameter::kSharedState:
      break;
  }
  return cost::ParameterRole::kOther;
}

std::vector<MeshConfig> EnumerateMeshConfigs(const cluster::ClusterSpec& cluster,
                                             const std::vector<cluster::Submesh>& submeshes,
                                             int64_t micro_batch_size, LogicalSpace space) {
  std::vector<MeshConfig> configs;
  for (const cluster::Submesh& submesh : submeshes) {
    const int64_t devices = submesh.devices();
    if (devices == 1) {
      configs.push_back({submesh, {1}, false});
      continue;
    }
    const int64_t max_mp = space == LogicalSpace::kAll ? devices : submesh.shape.back();
    for (int64_t mp = 1; mp <= max_mp; ++mp) {
      const int64_t dp = devices / mp;
      if (devices % mp != 0 || micro_batch_size % dp != 0) continue;
      configs.push_back({submesh, mp == 1 ? std::vector<int64_t>{dp} : std::vector{dp, mp}, true});
    }
    configs.push_back({submesh, {devices}, false});
  }
  return configs;
}

int64_t HostsOf(const cluster::Submesh& submesh) {
  return std::accumulate(submesh.shape.begin(), submesh.shape.end() - 1, int64_t{1},
                         std::multiplies<>());
}

std::string MeshConfigName(const MeshConfig& config) {
  return fmt::format("({}) as {}{}", fmt::join(config.submesh.shape, ","),
                     cluster::ShapeString(config.logical_shape), config.force_batch ? " dp" : "");
}

Result<LayerCostTable> ComputeLayerCosts(const ir::Module& loss,
                                         const std::vector<int64_t>& weights,
                                         const autodiff::TrainStepOptions& training,
                                         const cluster::ClusterSpec& cluster,
                                         std::vector<MeshConfig> configs, int64_t micro_batch_size,
                                         const LayerCostOptions& options) {
  LayerCostTable table;
  table.configs = std::move(configs);
  table.micro_batch_size = micro_batch_size;
  table.remat = training.remat;
  for (const cluster::HostType& type : cluster::HostTypes(cluster)) {
    table.device_types.push_back(type.host.device.name);
    table.updates_in_place.push_back(type.host.device.fuses_kernels);
  }
  // Like Alpa's stage profiling, plan each layer without a memory limit: what fits is decided
  // for whole stages, with the micro-batches they hold (pipeshard_planner.h).
  sharding::AutoShardingOptions auto_sharding = options.auto_sharding;
  auto_sharding.memory_budget_bytes = std::numeric_limits<int64_t>::max() / 4;
  // Automatic layers are markers too (pipeline/layer_marking.h), so the stage programs that run
  // a plan slice the loss as its costs did.
  const pipeline::ForwardLayers layers = pipeline::LayersFromBoundaries(*loss.entry());
  table.num_layers = layers.num_layers;

  // Distinct layers by their stage module's text, in order of first appearance.
  std::map<std::string, int64_t> distinct_of_text;
  std::vector<int64_t> distinct_of_layer;
  std::vector<pipeline::StageLoss> distinct;
  for (int64_t k = 0; k < layers.num_layers; ++k) {
    ALPA_ASSIGN_OR_RETURN(pipeline::StageLoss stage,
                          pipeline::SliceStageLoss(loss, weights, layers, k, k));
    table.output_bytes.push_back(stage.output_bytes);
    table.sent_values.push_back(stage.sent);
    std::vector<std::string>& received = table.received_values.emplace_back();
    std::vector<ir::Shape>& shapes = table.received_shapes.emplace_back();
    for (int64_t a : stage.activations) {
      received.push_back(stage.received[static_cast<size_t>(a)]);
      shapes.push_back(stage.module->entry()->parameters()[static_cast<size_t>(a)]->shape());
    }
    std::vector<int64_t>& layer_weights = table.weights.emplace_back();
    for (int64_t w : stage.weights) {
      layer_weights.push_back(stage.model_parameter[static_cast<size_t>(w)]);
    }
    auto [it, added] = distinct_of_text.emplace(hlo::PrintModule(*stage.module),
                                                static_cast<int64_t>(distinct.size()));
    if (added) distinct.push_back(std::move(stage));
    distinct_of_layer.push_back(it->second);
  }
  table.distinct_layers = static_cast<int64_t>(distinct.size());
  for (int64_t w : weights) {
    const ir::Shape& shape = loss.entry()->parameters()[static_cast<size_t>(w)]->shape();
    table.weight_bytes[w] = shape.ByteSize();
    table.weight_shapes.emplace(w, shape);
  }

  std::vector<cluster::LogicalMesh> meshes;
  for (const MeshConfig& config : table.configs) {
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh mesh, LogicalMeshOf(cluster, config));
    meshes.push_back(std::move(mesh));
  }
  const size_t num_configs = table.configs.size();
  std::vector<std::vector<LayerCost>> distinct_costs(distinct.size());
  std::vector<double> distinct_flops(distinct.size());
  for (size_t d = 0; d < distinct.size(); ++d) {
    ALPA_ASSIGN_OR_RETURN(StageStep layer, BuildStageStep(distinct[d], weights, training));
    distinct_flops[d] = layer.flops;
    std::vector<sharding::AutoShardingOptions> per_mesh;
    for (const MeshConfig& config : table.configs) {
      per_mesh.push_back(StageShardingOptions(layer, config, auto_sharding));
    }
    std::vector<Result<sharding::ShardingSolution>> solutions =
        sharding::AutoShardMeshes(*layer.step->entry(), cluster, meshes, per_mesh, options.threads);
    table.intra_op_solves += static_cast<int64_t>(num_configs);
    Status first_error;
    for (size_t c = 0; c < num_configs; ++c) {
      if (solutions[c].ok()) {
        ALPA_ASSIGN_OR_RETURN(
            LayerCost cost,
            CostOfStagePlan(distinct[d], layer, *solutions[c], table.configs[c].logical_shape));
        distinct_costs[d].push_back(std::move(cost));
        continue;
      }
      distinct_costs[d].push_back(LayerCost{});  // no plan on this configuration
      if (first_error.ok()) {
        first_error = solutions[c].status().WithContext(
            fmt::format("layer {} on {}", d, MeshConfigName(table.configs[c])));
      }
    }
    if (std::none_of(distinct_costs[d].begin(), distinct_costs[d].end(),
                     [](const LayerCost& cost) { return cost.fits; })) {
      return first_error;
    }
    if (options.progress) options.progress(static_cast<int64_t>(d) + 1, table.distinct_layers);
  }
  for (int64_t k = 0; k < layers.num_layers; ++k) {
    const size_t d = static_cast<size_t>(distinct_of_layer[static_cast<size_t>(k)]);
    table.costs.insert(table.costs.end(), distinct_costs[d].begin(), distinct_costs[d].end());
    table.flops.push_back(distinct_flops[d]);
  }
  for (size_t c = 0; c < num_configs; ++c) {
    ALPA_ASSIGN_OR_RETURN(std::vector<LayerBoundary> boundaries,
                          PriceLayerBoundaries(table, static_cast<int64_t>(c), cluster, meshes[c]));
    table.boundaries.push_back(std::move(boundaries));
  }
  return table;
}

}  // namespace alpa::plan
