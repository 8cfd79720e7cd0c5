#include "plan/pipeline_search.h"

#include <algorithm>

#include "plan/uniform_plans.h"

namespace alpa::plan {

Result<PipelineSearch> SearchPipeline(const ir::Module& loss, const std::vector<int64_t>& weights,
                                      const autodiff::TrainStepOptions& training,
                                      const cluster::ClusterSpec& cluster,
                                      PipelineSearchOptions options) {
  if (loss.entry() == nullptr || weights.size() >= loss.entry()->parameters().size()) {
    return InvalidArgument("module {} has no batch parameter to pipeline over", loss.name());
  }
  // The micro-batch's rows: dimension 0 of the loss's first batch parameter.
  int64_t first_batch = 0;
  while (std::count(weights.begin(), weights.end(), first_batch)) ++first_batch;
  const ir::Shape& batch = loss.entry()->parameters()[static_cast<size_t>(first_batch)]->shape();
  const int64_t micro_batch_size = batch.rank() > 0 ? batch.dim(0) : 1;
  const std::vector<MeshConfig> configs =
      EnumerateMeshConfigs(cluster, cluster::EnumerateSubmeshes(cluster, options.submeshes),
                           micro_batch_size, options.logical);
  PipelineSearch search;
  ALPA_ASSIGN_OR_RETURN(search.table, ComputeLayerCosts(loss, weights, training, cluster, configs,
                                                        micro_batch_size, options.costs));
  const int64_t micro_batches = training.num_micro_batches;
  if (options.manual) {
    const ManualStages& manual = *options.manual;
    if (manual.num_micro_batches && *manual.num_micro_batches != micro_batches) {
      return InvalidArgument("the stages are for {} micro-batches, the step has {}",
                             *manual.num_micro_batches, micro_batches);
    }
    ALPA_ASSIGN_OR_RETURN(std::vector<StageChoice> stages,
                          ResolveManualStages(manual, search.table));
    const std::vector<pipeline::ScheduleKind> schedules =
        manual.schedule ? std::vector{*manual.schedule} : options.planner.schedules;
    ALPA_ASSIGN_OR_RETURN(search.plan, EvaluateSchedules(search.table, cluster, stages, schedules,
                                                         micro_batches, manual.num_chunks));
    return search;
  }
  options.planner.num_micro_batches = micro_batches;
  const bool interleaved =
      std::count(options.planner.schedules.begin(), options.planner.schedules.end(),
                 pipeline::ScheduleKind::kInterleaved1F1B) > 0;
  options.planner.extra_candidates = UniformGridStages(search.table, cluster, interleaved);
  ALPA_ASSIGN_OR_RETURN(search.plan, PlanPipeshard(search.table, cluster, options.planner));
  return search;
}

}  // namespace alpa::plan
