#include "plan/pipeline_search.h"

#include <algorithm>

#include "plan/uniform_plans.h"

namespace alpa::plan {

Result<cluster::SubmeshSpace> ParseSubmeshSpace(std::string_view name) {
  if (name == "power-of-two") return cluster::SubmeshSpace::kPowerOfTwo;
  if (name == "small-power-of-two") return cluster::SubmeshSpace::kSmallPowerOfTwo;
  if (name == "all") return cluster::SubmeshSpace::kAll;
  return InvalidArgument("submesh space '{}': use power-of-two, small-power-of-two or all", name);
}

Result<LogicalSpace> ParseLogicalSpace(std::string_view name) {
  if (name == "single-node") return LogicalSpace::kSingleNodeModelParallel;
  if (name == "all") return LogicalSpace::kAll;
  return InvalidArgument("logical space '{}': use single-node or all", name);
}

namespace {

// The space's sub-meshes, and the sub-host ones a manual plan names beyond them (a stage of 3
// devices beside one of 1): those are costed too, so that the plan resolves.
std::vector<cluster::Submesh> SubmeshesToCost(const cluster::ClusterSpec& cluster,
                                              const PipelineSearchOptions& options) {
  std::vector<cluster::Submesh> submeshes = cluster::EnumerateSubmeshes(cluster, options.submeshes);
  if (!options.manual) return submeshes;
  for (const ManualStage& stage : options.manual->stages) {
    const std::vector<int64_t>& shape = stage.submesh;
    if (shape.empty() ||
        std::any_of(shape.begin(), shape.end() - 1, [](int64_t dim) { return dim != 1; })) {
      continue;  // whole hosts: the space's, or not a sub-mesh FindConfig will resolve
    }
    for (cluster::Submesh& submesh : cluster::SubHostSubmeshes(cluster, shape.back())) {
      if (submesh.shape == shape && std::ranges::find(submeshes, submesh) == submeshes.end()) {
        submeshes.push_back(std::move(submesh));
      }
    }
  }
  return submeshes;
}

}  // namespace

Result<LayerCostTable> PipelineLayerCosts(const ir::Module& loss,
                                          const std::vector<int64_t>& weights,
                                          const autodiff::TrainStepOptions& training,
                                          const cluster::ClusterSpec& cluster,
                                          const PipelineSearchOptions& options) {
  if (loss.entry() == nullptr || weights.size() >= loss.entry()->parameters().size()) {
    return InvalidArgument("module {} has no batch parameter to pipeline over", loss.name());
  }
  // The micro-batch's rows: dimension 0 of the loss's first batch parameter.
  int64_t first_batch = 0;
  while (std::count(weights.begin(), weights.end(), first_batch)) ++first_batch;
  const ir::Shape& batch = loss.entry()->parameters()[static_cast<size_t>(first_batch)]->shape();
  const int64_t micro_batch_size = batch.rank() > 0 ? batch.dim(0) : 1;
  const std::vector<MeshConfig> configs = EnumerateMeshConfigs(
      cluster, SubmeshesToCost(cluster, options), micro_batch_size, options.logical);
  return ComputeLayerCosts(loss, weights, training, cluster, configs, micro_batch_size,
                           options.costs);
}

Result<PipeshardPlan> EvaluateManualStages(const ManualStages& manual, const LayerCostTable& table,
                                           const cluster::ClusterSpec& cluster,
                                           const std::vector<pipeline::ScheduleKind>& schedules,
                                           int64_t num_micro_batches) {
  if (manual.num_micro_batches && *manual.num_micro_batches != num_micro_batches) {
    return InvalidArgument(
        "num_micro_batches is {} but the model was built with {} micro-batches; give the same "
        "number to both",
        *manual.num_micro_batches, num_micro_batches);
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<StageChoice> stages, ResolveManualStages(manual, table));
  return EvaluateSchedules(table, cluster, stages,
                           manual.schedule ? std::vector{*manual.schedule} : schedules,
                           num_micro_batches, manual.num_chunks);
}

Result<PipeshardPlan> PlanStages(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                                 int64_t num_micro_batches, PipelineSearchOptions options) {
  if (options.manual) {
    return EvaluateManualStages(*options.manual, table, cluster, options.planner.schedules,
                                num_micro_batches);
  }
  options.planner.num_micro_batches = num_micro_batches;
  const bool interleaved =
      std::count(options.planner.schedules.begin(), options.planner.schedules.end(),
                 pipeline::ScheduleKind::kInterleaved1F1B) > 0;
  options.planner.extra_candidates = UniformGridStages(table, cluster, interleaved);
  return PlanPipeshard(table, cluster, options.planner);
}

Result<PipelineSearch> SearchPipeline(const ir::Module& loss, const std::vector<int64_t>& weights,
                                      const autodiff::TrainStepOptions& training,
                                      const cluster::ClusterSpec& cluster,
                                      const PipelineSearchOptions& options) {
  PipelineSearch search;
  ALPA_ASSIGN_OR_RETURN(search.table,
                        PipelineLayerCosts(loss, weights, training, cluster, options));
  ALPA_ASSIGN_OR_RETURN(search.plan,
                        PlanStages(search.table, cluster, training.num_micro_batches, options));
  return search;
}

}  // namespace alpa::plan
