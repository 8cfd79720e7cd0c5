#include "api/pipeshard_stages.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "ir/value_tag.h"
#include "sharding/follow_util.h"
#include "sharding/strategy_util.h"
#include "spmd/partitioner.h"

namespace alpa::api {
namespace {

// The step's copy of each sent value (plan::SentValues) appended to the step's results.
Status AppendSentValues(ir::Module& step, int64_t sent) {
  ir::Computation& entry = *step.entry();
  const std::vector<ir::Instruction*> copies = plan::SentValues(entry, sent);
  ir::Instruction* root = entry.root();
  std::vector<ir::Shape> shapes = root->shape().tuple_shapes();
  auto outputs =
      std::make_unique<ir::Instruction>("stage_results", ir::Opcode::kTuple, ir::Shape());
  for (ir::Instruction* element : root->operands()) outputs->AppendOperand(element);
  for (size_t j = 0; j < copies.size(); ++j) {
    if (copies[j] == nullptr) {
      return Internal("the stage's train step lost sent value {}", j);
    }
    outputs->AppendOperand(copies[j]);
    shapes.push_back(copies[j]->shape());
  }
  outputs->set_shape(ir::Shape::Tuple(std::move(shapes)));
  entry.set_root(entry.AddInstruction(std::move(outputs)));
  return Status::Ok();
}

spmd::StageParameter RoleOf(autodiff::StepParameter kind, const pipeline::StageLoss& loss,
                            int64_t loss_parameter) {
  switch (kind) {
    case autodiff::StepParameter::kWeight:
      return spmd::StageParameter::kWeight;
    case autodiff::StepParameter::kOptimizerState:
      return spmd::StageParameter::kOptimizerState;
    case autodiff::StepParameter::kSharedState:
      return spmd::StageParameter::kSharedState;
    case autodiff::StepParameter::kBatch:
      break;
  }
  const auto& cotangents = loss.cotangents;
  if (std::find(cotangents.begin(), cotangents.end(), loss_parameter) != cotangents.end()) {
    return spmd::StageParameter::kCotangent;
  }
  return loss.received[static_cast<size_t>(loss_parameter)].empty()
             ? spmd::StageParameter::kBatch
             : spmd::StageParameter::kReceived;
}

// Each weight's gradient: the gradient-tagged value nearest its next value (with a loss scale
// the divided one), and each gradient's layout as the partitioned program holds it.
Status FindGradients(const ir::Computation& entry, StageProgram& stage) {
  const ir::InstructionIndex by_name(entry);
  for (const std::string& name : stage.split.gradient_names) {
    const ir::Instruction* gradient = by_name.Find(name);
    const int64_t node = gradient == nullptr ? -1 : stage.solution.graph.NodeOf(*gradient);
    if (node < 0) return Internal("the stage's gradient %{} has no layout", name);
    ALPA_ASSIGN_OR_RETURN(sharding::LeafSpecs specs, sharding::LayoutBeforeCollectives(
                                                         *gradient, stage.solution.Chosen(node)));
    stage.gradient_specs.push_back(specs.at(0));
  }
  std::vector<const ir::Instruction*> next_values;
  for (size_t i = 0; i < stage.model_weights.size(); ++i) {
    next_values.push_back(entry.root()->operand(stage.roles.next_value_leaves[i]));
  }
  for (const ir::Instruction* nearest : autodiff::UpdateGradients(entry, next_values)) {
    const auto& names = stage.split.gradient_names;
    const auto it =
        nearest == nullptr ? names.end() : std::find(names.begin(), names.end(), nearest->name());
    stage.weight_gradient.push_back(it == names.end() ? -1 : it - names.begin());
  }
  return Status::Ok();
}

// Pins the step's received activations and its sent values' cotangents to the layouts the plan
// priced its handovers with (plan::PlannedStage::edge_layouts), so that the transfers between the
// stages move what the plan charged for them (a pin the options already hold is kept). The rest
// of the stage is planned again as one module around those edges.
void PinStageEdges(const pipeline::StageLoss& loss, const plan::StageStep& step,
                   const plan::PlannedStage& planned, sharding::AutoShardingOptions& options) {
  const std::vector<ir::Instruction*> parameters = step.step->entry()->parameters();
  auto pin = [&](int64_t loss_parameter, const sharding::ShardingSpec& spec) {
    const ir::Instruction& parameter =
        *parameters[static_cast<size_t>(step.step_parameter[static_cast<size_t>(loss_parameter)])];
    options.pinned_outputs.emplace(parameter.name(), sharding::LeafSpecs{spec});
  };
  for (int64_t a : loss.activations) {
    const auto it = planned.edge_layouts.received.find(loss.received[static_cast<size_t>(a)]);
    if (it != planned.edge_layouts.received.end()) pin(a, it->second);
  }
  for (size_t i = 0; i < loss.cotangents.size(); ++i) {
    const std::string& sent = loss.sent[static_cast<size_t>(loss.cotangent_of[i])];
    const auto it = planned.edge_layouts.cotangents.find(sent);
    if (it != planned.edge_layouts.cotangents.end()) pin(loss.cotangents[i], it->second);
  }
}

Result<StageProgram> BuildStageProgram(const ir::Module& loss, const std::vector<int64_t>& weights,
                                       const pipeline::ForwardLayers& layers,
                                       const autodiff::TrainStepOptions& training,
                                       const cluster::ClusterSpec& cluster,
                                       const plan::PlannedStage& planned,
                                       const plan::MeshConfig& config,
                                       const StageProgramOptions& options) {
  StageProgram stage;
  ALPA_ASSIGN_OR_RETURN(stage.loss,
                        pipeline::SliceStageLoss(loss, weights, layers, planned.choice.first_layer,
                                                 planned.choice.last_layer));
  ALPA_ASSIGN_OR_RETURN(plan::StageStep step, plan::BuildStageStep(stage.loss, weights, training));
  const autodiff::TrainStepOptions& stage_training = step.training;
  ALPA_RETURN_IF_ERROR(AppendSentValues(*step.step, static_cast<int64_t>(stage.loss.sent.size())));
  stage.mesh_shape = config.logical_shape;
  stage.devices = planned.devices;

  sharding::AutoShardingOptions sharding_options = options.auto_sharding;
  sharding_options.memory_budget_bytes = std::numeric_limits<int64_t>::max() / 4;
  sharding_options = plan::StageShardingOptions(step, config, sharding_options);
  PinStageEdges(stage.loss, step, planned, sharding_options);
  ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh mesh, plan::LogicalMeshOf(cluster, config));
  const ir::Computation& entry = *step.step->entry();
  ALPA_ASSIGN_OR_RETURN(stage.solution,
                        sharding::AutoShard(entry, cluster, mesh, sharding_options));
  const cluster::HostType& host =
      cluster::HostTypes(cluster)[static_cast<size_t>(config.submesh.host_type)];
  ALPA_ASSIGN_OR_RETURN(stage.figures, plan::FiguresOfStagePlan(stage.loss, step, stage.solution,
                                                                config.logical_shape,
                                                                host.host.device.fuses_kernels));

  // Roles: the step's parameters (autodiff/train_step.h's layout) and its result leaves
  // (loss, W'..., state'..., shared'... (t + 1), input gradients..., then the sent values
  // appended above).
  const std::vector<autodiff::StepParameter> layout =
      autodiff::StepParameterLayout(*stage.loss.module, stage.loss.weights, stage_training);
  stage.loss_parameter.assign(layout.size(), -1);  // the optimizer and shared states stay -1
  for (size_t p = 0; p < step.step_parameter.size(); ++p) {
    stage.loss_parameter[static_cast<size_t>(step.step_parameter[p])] = static_cast<int64_t>(p);
  }
  for (size_t q = 0; q < layout.size(); ++q) {
    stage.roles.parameters.push_back(RoleOf(layout[q], stage.loss, stage.loss_parameter[q]));
  }
  stage.roles.loss_leaf = stage.loss.has_loss ? 0 : -1;
  int64_t leaf = 1;
  for (int64_t next : autodiff::StepNextValueElements(layout)) {
    if (next >= 0) stage.roles.next_value_leaves.push_back(leaf++);
  }
  for (size_t a = 0; a < stage.loss.activations.size(); ++a) {
    stage.roles.input_gradient_leaves.push_back(leaf++);
  }
  for (size_t j = 0; j < stage.loss.sent.size(); ++j) stage.roles.sent_leaves.push_back(leaf++);

  spmd::PartitionOptions partition;
  ALPA_ASSIGN_OR_RETURN(
      partition.result_specs,
      spmd::NextValueResultSpecs(entry, stage.solution, sharding_options.next_values));
  const std::vector<sharding::ShardingSpec> produced = spmd::ResultSpecs(entry, stage.solution);
  // The values that leave the stage are those its plan priced as whole (plan::StageStep::
  // whole_values): a pending sum is summed before they leave.
  const ir::Instruction* root = entry.root();
  for (int64_t l = 0; l < root->operand_count(); ++l) {
    if (std::ranges::find(step.whole_values, root->operand(l)->name()) != step.whole_values.end()) {
      partition.result_specs[l] = sharding::WithoutPartial(produced[static_cast<size_t>(l)]);
    }
  }
  ALPA_ASSIGN_OR_RETURN(stage.program, spmd::PartitionComputation(entry, stage.solution,
                                                                  stage.mesh_shape, partition));
  stage.result_specs = spmd::ResultSpecs(entry, stage.solution, partition);
  for (const ir::Instruction* parameter : entry.parameters()) {
    const int64_t node = stage.solution.graph.NodeOf(*parameter);
    stage.parameter_specs.push_back(
        node < 0 ? sharding::ShardingSpec::Replicated(parameter->shape().rank())
                 : stage.solution.Chosen(node).output.at(0));
  }
  ALPA_ASSIGN_OR_RETURN(stage.split, spmd::SplitStageProgram(*stage.program, stage.roles));
  for (int64_t w : stage.loss.weights) {
    stage.model_weights.push_back(stage.loss.model_parameter[static_cast<size_t>(w)]);
  }
  stage.states_per_weight =
      autodiff::StateCounts(*stage.loss.module, stage.loss.weights, stage_training).per_weight;
  ALPA_RETURN_IF_ERROR(FindGradients(entry, stage));
  stage.collectives = spmd::CountCollectives(*stage.program->entry());
  stage.step = std::move(step.step);
  return stage;
}

}  // namespace

Result<std::vector<StageProgram>> BuildStagePrograms(const ir::Module& loss,
                                                     const std::vector<int64_t>& weights,
                                                     const autodiff::TrainStepOptions& training,
                                                     const cluster::ClusterSpec& cluster,
                                                     const plan::PipeshardPlan& plan,
                                                     const std::vector<plan::MeshConfig>& configs,
                                                     const StageProgramOptions& options) {
  if (loss.entry() == nullptr) return InvalidArgument("module {} has no entry", loss.name());
  const pipeline::ForwardLayers layers = pipeline::LayersFromBoundaries(*loss.entry());
  std::vector<StageProgram> stages;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const plan::PlannedStage& planned = plan.stages[s];
    const int64_t config = planned.choice.config;
    if (config < 0 || config >= static_cast<int64_t>(configs.size())) {
      return InvalidArgument("stage {}: mesh configuration {} of {}", s, config, configs.size());
    }
    Result<StageProgram> stage =
        BuildStageProgram(loss, weights, layers, training, cluster, planned,
                          configs[static_cast<size_t>(config)], options);
    if (!stage.ok()) {
      return stage.status().WithContext(
          fmt::format("stage {} (layers {}..{} on {})", s, planned.choice.first_layer,
                      planned.choice.last_layer, plan::MeshConfigName(configs[config])));
    }
    stages.push_back(std::move(stage).value());
  }
  return stages;
}

}  // namespace alpa::api
