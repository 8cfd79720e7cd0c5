// Megatron-style hand plans (Alpa's UniformStageOption with its benchmarks' (dp, op, pp)): pp
// stages of FLOP-balanced layer groups (manual_stages.h's grouping), each on dp x op devices (one
// host's (1, dp·op), or whole hosts) as the logical mesh (dp, op) with the batch forced onto dp,
// evaluated on the same layer costs as the pipeshard search, so the two compare like for like.
#ifndef ALPA_PLAN_UNIFORM_PLANS_H_
#define ALPA_PLAN_UNIFORM_PLANS_H_

#include <cstdint>
#include <vector>

#include "cluster/cluster_spec.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "support/status.h"

namespace alpa::plan {

// The stages of (dp, op, pp); with `chunks` > 1, Megatron's interleaved layout: pp · chunks
// layer groups, group j on the devices of stage j % pp (pipeshard_planner.h's virtual stages).
// Errors: dp·op·pp is not the cluster's device count, pp · chunks above the model's layers, a
// sub-mesh that is neither part of one host nor whole hosts, a (dp, op) the table has no
// configuration for, a heterogeneous cluster.
Result<std::vector<StageChoice>> UniformStages(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster, int64_t dp,
                                               int64_t op, int64_t pp, int64_t chunks = 1);

// UniformStages evaluated under options.schedules, the fastest kept.
Result<PipeshardPlan> PlanUniform(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                                  int64_t dp, int64_t op, int64_t pp,
                                  const PipeshardOptions& options);

struct UniformGridPoint {
  int64_t dp = 0, op = 0, pp = 0;
  Result<PipeshardPlan> plan;  // or why the point does not fit
};

// Every grid point, in order of pp then op: pp dividing the devices and at most the model's
// layers, op a power of two up to one host's devices and dividing the devices of a stage.
std::vector<UniformGridPoint> SearchUniformGrid(const LayerCostTable& table,
                                                const cluster::ClusterSpec& cluster,
                                                const PipeshardOptions& options);

// The stages of every grid point above that has them (pipeshard_planner.h's extra candidates);
// with `interleaved`, also each point with pp > 1 in 2 chunks per device.
std::vector<CandidateStages> UniformGridStages(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster,
                                               bool interleaved);

// The fastest point of `grid` (the first on a tie); NOT_FOUND when none fits.
Result<UniformGridPoint> FastestGridPoint(const std::vector<UniformGridPoint>& grid);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_UNIFORM_PLANS_H_
