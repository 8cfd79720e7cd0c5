#include "plan/stage_composition.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "ir/dtype.h"
#include "pipeline/stage_slicing.h"
#include "sharding/resharding.h"

namespace alpa::plan {
namespace {

bool UpdatesInPlace(const LayerCostTable& table, int64_t config) {
  const size_t host_type =
      static_cast<size_t>(table.configs[static_cast<size_t>(config)].submesh.host_type);
  return host_type < table.updates_in_place.size() && table.updates_in_place[host_type];
}

void AddLayer(StageFigures& stage, const LayerCost& layer, double flops, bool in_place) {
  stage.fits = stage.fits && layer.fits;
  stage.forward_s += layer.forward_s;
  stage.backward_s += layer.backward_s;
  stage.update_s += layer.update_s;
  stage.flops += flops;
  stage.static_bytes += layer.static_bytes;
  int64_t gradients = 0;
  for (int64_t bytes : layer.weight_gradient_bytes) gradients += bytes;
  // The task: the layers run in order (the header). Where the update runs in place (XLA, the
  // train state donated), the gradients' sums are static and the layer's peak over its whole
  // step bounds what it holds above static, the update's included. Our CPU runtime keeps the
  // sums apart: a task holds its micro-batch's gradients from their computing to the end of its
  // backward (the layers before this one run their backward after it, beside them), above the
  // weights and optimizer state, and its backward starts by computing again the broadcasts every
  // layer's backward reads (the layers before this one hold theirs while it runs).
  if (in_place) {
    stage.task_bytes =
        std::max(stage.task_bytes, stage.activation_bytes + layer.peak_bytes - layer.static_bytes);
  } else {
    stage.task_bytes = std::max(stage.task_bytes + gradients,
                                stage.activation_bytes + stage.recomputed_bytes +
                                    layer.task_peak_bytes - layer.static_bytes + gradients);
    stage.gradient_sum_bytes += gradients;
    stage.recomputed_bytes += layer.recomputed_bytes;
  }
  stage.activation_bytes += layer.activation_bytes;
  // At the end of the forward every layer's activations are held (a layer's peak can fall below
  // its static bytes plus them: static counts the gradients it has not yet computed).
  stage.task_bytes = std::max(stage.task_bytes, stage.activation_bytes);
  // Our CPU runtime keeps the old weights and state through the update, which runs after every
  // backward: its working values are one layer's at a time, while its new weights and state of
  // all the stage's layers add up (layer_costs.h, updates_in_place).
  if (!in_place) {
    stage.update_result_bytes += layer.update_result_bytes;
    stage.update_working_bytes = std::max(stage.update_working_bytes,
                                          layer.update_temporary_bytes - layer.update_result_bytes);
  }
  for (const auto& [kind, count] : layer.collectives) stage.collectives[kind] += count;
}

}  // namespace

StageComposer::StageComposer(const LayerCostTable& table, int64_t first, int64_t config)
    : table_(table),
      first_(first),
      last_(first - 1),
      config_(config),
      in_place_(UpdatesInPlace(table, config)) {
  if (static_cast<size_t>(config) < table.boundaries.size()) {
    for (const LayerBoundary& boundary : table.boundaries[static_cast<size_t>(config)]) {
      if (boundary.from >= first) boundaries_.push_back(&boundary);
    }
    std::ranges::stable_sort(boundaries_, {}, &LayerBoundary::to);
  }
}

void StageComposer::Extend() {
  const int64_t k = ++last_;
  const LayerCost& layer = table_.at(k, config_);
  AddLayer(stage_, layer, table_.flops[static_cast<size_t>(k)], in_place_);
  // A weight an earlier layer of the stage reads too is held and updated once.
  const std::vector<int64_t>& reads = table_.weights[static_cast<size_t>(k)];
  for (size_t p = 0; p < reads.size(); ++p) {
    const auto weight = static_cast<size_t>(reads[p]);
    if (weight >= weight_held_.size()) weight_held_.resize(weight + 1, false);
    const bool held = weight_held_[weight];
    weight_held_[weight] = true;
    if (!held || p >= layer.weight_static_bytes.size()) continue;
    stage_.static_bytes -= layer.weight_static_bytes[p];
    stage_.update_s -= layer.weight_update_s[p];
    if (!in_place_) {  // one running sum, one new value and state (less its freed gradient)
      const int64_t gradient = layer.weight_gradient_bytes[p];
      stage_.gradient_sum_bytes -= gradient;
      stage_.update_result_bytes = std::max<int64_t>(
          0, stage_.update_result_bytes - (layer.weight_static_bytes[p] - 2 * gradient));
    }
  }
  for (; next_ < boundaries_.size() && boundaries_[next_]->to <= k; ++next_) {
    const LayerBoundary& boundary = *boundaries_[next_];
    stage_.forward_s += boundary.forward_s;
    stage_.backward_s += boundary.backward_s;
    stage_.boundary_s += boundary.forward_s + boundary.backward_s;
  }
}

pipeline::StageMemory StageMemoryOf(const StageFigures& stage) {
  return {.static_bytes = stage.static_bytes,
          .activation_bytes = stage.activation_bytes,
          .temporary_bytes = stage.temporary_bytes(),
          .update_temporary_bytes = stage.update_temporary_bytes(),
          .gradient_sum_bytes = stage.gradient_sum_bytes};
}

StageFigures ComposeStage(const LayerCostTable& table, int64_t first, int64_t last,
                          int64_t config) {
  StageComposer stage(table, first, config);
  while (stage.last() < last) stage.Extend();
  return stage.figures();
}

Result<std::vector<LayerBoundary>> PriceLayerBoundaries(const LayerCostTable& table, int64_t config,
                                                        const cluster::ClusterSpec& cluster,
                                                        const cluster::LogicalMesh& mesh) {
  ALPA_ASSIGN_OR_RETURN(sharding::ReshardCostModel model,
                        sharding::ReshardCostModel::Create(cluster, mesh));
  // Which layer sends each value, and its position among the values that layer sends.
  std::map<std::string, std::pair<int64_t, size_t>> sender;
  for (int64_t k = 0; k < table.num_layers; ++k) {
    const std::vector<std::string>& sent = table.sent_values[static_cast<size_t>(k)];
    for (size_t i = 0; i < sent.size(); ++i) sender.emplace(sent[i], std::make_pair(k, i));
  }
  std::vector<LayerBoundary> boundaries;
  for (int64_t to = 0; to < table.num_layers; ++to) {
    const LayerCost& receiver = table.at(to, config);
    const std::vector<std::string>& received = table.received_values[static_cast<size_t>(to)];
    for (size_t a = 0; a < received.size(); ++a) {
      const auto it = sender.find(received[a]);
      if (it == sender.end()) continue;  // the batch, or a value no layer sends
      // Plain copies: clang 14 rejects capturing a structured binding in the lambda below.
      const int64_t from = it->second.first;
      const size_t i = it->second.second;
      const LayerCost& giver = table.at(from, config);
      if (!receiver.fits || !giver.fits) continue;
      const ir::Shape& shape = table.received_shapes[static_cast<size_t>(to)][a];
      const int64_t element_bytes = ir::DTypeByteSize(shape.dtype());
      auto boundary = std::find_if(boundaries.begin(), boundaries.end(),
                                   [&](const auto& b) { return b.from == from && b.to == to; });
      if (boundary == boundaries.end()) {
        boundaries.push_back({.from = from, .to = to});
        boundary = boundaries.end() - 1;
      }
      boundary->forward_s += model.ReshardSeconds(giver.sent_specs[i], receiver.received_specs[a],
                                                  shape.dims(), element_bytes);
      boundary->backward_s += model.ReshardSeconds(
          receiver.input_gradient_specs[a], giver.cotangent_specs[i], shape.dims(), element_bytes);
    }
  }
  return boundaries;
}

Result<StageFigures> PlanWholeStage(const ir::Module& loss, const std::vector<int64_t>& weights,
                                    const autodiff::TrainStepOptions& training,
                                    const cluster::ClusterSpec& cluster,
                                    const LayerCostTable& table, int64_t config, int64_t first,
                                    int64_t last, const sharding::AutoShardingOptions& options) {
  if (config < 0 || config >= static_cast<int64_t>(table.configs.size())) {
    return InvalidArgument("mesh configuration {} of {}", config, table.configs.size());
  }
  const MeshConfig& mesh_config = table.configs[static_cast<size_t>(config)];
  ALPA_ASSIGN_OR_RETURN(
      pipeline::StageLoss stage,
      pipeline::SliceStageLoss(loss, weights, pipeline::LayersFromBoundaries(*loss.entry()), first,
                               last));
  ALPA_ASSIGN_OR_RETURN(StageStep step, BuildStageStep(stage, weights, training));
  sharding::AutoShardingOptions stage_options = options;
  stage_options.memory_budget_bytes = std::numeric_limits<int64_t>::max() / 4;
  stage_options = StageShardingOptions(step, mesh_config, stage_options);
  ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh mesh, LogicalMeshOf(cluster, mesh_config));
  ALPA_ASSIGN_OR_RETURN(sharding::ShardingSolution solution,
                        sharding::AutoShard(*step.step->entry(), cluster, mesh, stage_options));
  return FiguresOfStagePlan(stage, step, solution, mesh_config.logical_shape,
                            UpdatesInPlace(table, config));
}

Result<StageFigures> FiguresOfStagePlan(const pipeline::StageLoss& stage, const StageStep& step,
                                        const sharding::ShardingSolution& solution,
                                        const std::vector<int64_t>& mesh_shape,
                                        bool updates_in_place) {
  ALPA_ASSIGN_OR_RETURN(LayerCost cost, CostOfStagePlan(stage, step, solution, mesh_shape));
  StageFigures figures;
  AddLayer(figures, cost, step.flops, updates_in_place);
  return figures;
}

}  // namespace alpa::plan
