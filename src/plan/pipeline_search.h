// The whole pipelined search of one model on one cluster, as a function over plain data: the
// mesh configurations of its sub-meshes, every layer's cost on each (layer_costs.h), then the
// pipeshard planner over the stage DP's candidates and the uniform grid's (pipeshard_planner.h),
// or given stages evaluated under the schedules asked for. What `alpa plan --method pipeshard`
// searches, and what `alpa run --method pipeshard` and the API plan before running.
#ifndef ALPA_PLAN_PIPELINE_SEARCH_H_
#define ALPA_PLAN_PIPELINE_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "cluster/submesh.h"
#include "ir/module.h"
#include "plan/layer_costs.h"
#include "plan/manual_stages.h"
#include "plan/pipeshard_planner.h"
#include "support/status.h"

namespace alpa::plan {

struct PipelineSearchOptions {
  cluster::SubmeshSpace submeshes = cluster::SubmeshSpace::kPowerOfTwo;
  LogicalSpace logical = LogicalSpace::kAll;
  LayerCostOptions costs;
  // Its num_micro_batches and extra candidates (the uniform grid's) are set by PlanStages.
  PipeshardOptions planner;
  // Given stages (a manual plan or a saved plan's, manual_stages.h) in place of the search,
  // evaluated under their own schedule when they name one, else under planner.schedules.
  std::optional<ManualStages> manual;
};

// The spaces by the names users give them (`alpa plan --submesh-space/--logical-space`, the
// Python package's PipeshardParallel): "power-of-two", "small-power-of-two", "all"; and
// "single-node", "all". Errors name the text and list the names.
Result<cluster::SubmeshSpace> ParseSubmeshSpace(std::string_view name);
Result<LogicalSpace> ParseLogicalSpace(std::string_view name);

struct PipelineSearch {
  LayerCostTable table;
  PipeshardPlan plan;
};

// The cost of every layer of `loss` (at the micro-batch size, trained as `training` says) on
// every mesh configuration of the options' sub-mesh and logical spaces. Errors: the layer costs'.
Result<LayerCostTable> PipelineLayerCosts(const ir::Module& loss,
                                          const std::vector<int64_t>& weights,
                                          const autodiff::TrainStepOptions& training,
                                          const cluster::ClusterSpec& cluster,
                                          const PipelineSearchOptions& options);

// `manual` stages (manual_stages.h) evaluated on `table` under their own schedule, or the
// fastest of `schedules`. Errors: a micro-batch count other than `num_micro_batches`, stages
// that do not resolve or fit (named).
Result<PipeshardPlan> EvaluateManualStages(const ManualStages& manual, const LayerCostTable& table,
                                           const cluster::ClusterSpec& cluster,
                                           const std::vector<pipeline::ScheduleKind>& schedules,
                                           int64_t num_micro_batches);

// The options' manual stages evaluated, or the pipeshard planner's best plan on `table` with
// the uniform grid's stages among its candidates. Errors: the planner's (a model that fits
// nowhere says what it needs) or the stages'.
Result<PipeshardPlan> PlanStages(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                                 int64_t num_micro_batches, PipelineSearchOptions options);

// Both: `loss`'s layer costs, then its plan at training.num_micro_batches.
Result<PipelineSearch> SearchPipeline(const ir::Module& loss, const std::vector<int64_t>& weights,
                                      const autodiff::TrainStepOptions& training,
                                      const cluster::ClusterSpec& cluster,
                                      const PipelineSearchOptions& options);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PIPELINE_SEARCH_H_
