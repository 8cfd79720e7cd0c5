// The whole pipelined search of one model on one cluster, as a function over plain data: the
// mesh configurations of its sub-meshes, every layer's cost on each (layer_costs.h), then the
// pipeshard planner over the stage DP's candidates and the uniform grid's (pipeshard_planner.h),
// or given stages evaluated under the schedules asked for. What `alpa plan --method pipeshard`
// searches, and what `alpa run --method pipeshard` and the API plan before running.
#ifndef ALPA_PLAN_PIPELINE_SEARCH_H_
#define ALPA_PLAN_PIPELINE_SEARCH_H_

#include <cstdint>
#include <optional>
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
  // Its num_micro_batches is set from the training options; extra candidates are the uniform
  // grid's.
  PipeshardOptions planner;
  // Given stages (a manual plan or a saved plan's, manual_stages.h) in place of the search,
  // evaluated under their own schedule when they name one, else under planner.schedules.
  std::optional<ManualStages> manual;
};

struct PipelineSearch {
  LayerCostTable table;
  PipeshardPlan plan;
};

// `loss` at the micro-batch size, trained as `training` says (its num_micro_batches is the
// pipeline's). Errors: the layer costs' and the planner's (a model that fits nowhere says what it
// needs), or the given stages' (named; a micro-batch count other than the training's too).
Result<PipelineSearch> SearchPipeline(const ir::Module& loss, const std::vector<int64_t>& weights,
                                      const autodiff::TrainStepOptions& training,
                                      const cluster::ClusterSpec& cluster,
                                      PipelineSearchOptions options);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PIPELINE_SEARCH_H_
