#include "plan/uniform_plans.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "plan/manual_stages.h"

namespace alpa::plan {

Result<std::vector<StageChoice>> UniformStages(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster, int64_t dp,
                                               int64_t op, int64_t pp, int64_t chunks) {
  const int64_t devices = cluster::TotalDevices(cluster);
  const int64_t per_host = cluster.hosts.front().devices;
  const std::string plan = fmt::format("dp {} x op {} x pp {}{}", dp, op, pp,
                                       chunks > 1 ? fmt::format(" in {} chunks", chunks) : "");
  if (const size_t types = cluster::HostTypes(cluster).size(); types > 1) {
    return InvalidArgument(
        "{}: a uniform plan gives every stage the same devices, and the cluster has {} host "
        "types; plan with --method pipeshard",
        plan, types);
  }
  if (dp < 1 || op < 1 || pp < 1 || dp * op * pp != devices) {
    return InvalidArgument("{}: the product must be the cluster's {} devices", plan, devices);
  }
  if (pp * chunks > table.num_layers) {
    return InvalidArgument("{}: {} stages, but the model has {} layers", plan, pp * chunks,
                           table.num_layers);
  }
  const int64_t stage_devices = dp * op;
  if (stage_devices > per_host && stage_devices % per_host != 0) {
    return InvalidArgument(
        "{}: {} devices per stage are neither part of one host nor whole hosts "
        "of {}",
        plan, stage_devices, per_host);
  }
  ManualStages manual;
  manual.num_layers = pp * chunks;
  for (int64_t j = 0; j < pp * chunks; ++j) {
    manual.stages.push_back(
        {.layers = {j},
         .submesh = stage_devices <= per_host
                        ? std::vector<int64_t>{1, stage_devices}
                        : std::vector<int64_t>{stage_devices / per_host, per_host},
         .logical_mesh = {dp, op},
         .force_batch = true,
         .device_type = ""});
  }
  Result<std::vector<StageChoice>> stages = ResolveManualStages(manual, table);
  if (!stages.ok()) return stages.status().WithContext(plan);
  return stages;
}

Result<PipeshardPlan> PlanUniform(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                                  int64_t dp, int64_t op, int64_t pp,
                                  const PipeshardOptions& options) {
  ALPA_ASSIGN_OR_RETURN(std::vector<StageChoice> stages, UniformStages(table, cluster, dp, op, pp));
  return EvaluateSchedules(table, cluster, stages, options.schedules, options.num_micro_batches);
}

namespace {

// Calls visit(dp, op, pp) for each grid point, in SearchUniformGrid's order.
template <typename Visit>
void ForEachGridPoint(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                      Visit visit) {
  const int64_t devices = cluster::TotalDevices(cluster);
  for (int64_t pp = 1; pp <= std::min(devices, table.num_layers); ++pp) {
    if (devices % pp != 0) continue;
    const int64_t stage_devices = devices / pp;
    for (int64_t op = 1; op <= std::min(stage_devices, cluster.hosts.front().devices); op *= 2) {
      if (stage_devices % op == 0) visit(stage_devices / op, op, pp);
    }
  }
}

}  // namespace

std::vector<UniformGridPoint> SearchUniformGrid(const LayerCostTable& table,
                                                const cluster::ClusterSpec& cluster,
                                                const PipeshardOptions& options) {
  std::vector<UniformGridPoint> grid;
  ForEachGridPoint(table, cluster, [&](int64_t dp, int64_t op, int64_t pp) {
    grid.push_back({dp, op, pp, PlanUniform(table, cluster, dp, op, pp, options)});
  });
  return grid;
}

std::vector<CandidateStages> UniformGridStages(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster,
                                               bool interleaved) {
  std::vector<CandidateStages> candidates;
  ForEachGridPoint(table, cluster, [&](int64_t dp, int64_t op, int64_t pp) {
    for (int64_t chunks = 1; chunks <= (interleaved && pp > 1 ? 2 : 1); ++chunks) {
      Result<std::vector<StageChoice>> stages = UniformStages(table, cluster, dp, op, pp, chunks);
      if (stages.ok()) candidates.push_back({std::move(stages).value(), chunks});
    }
  });
  return candidates;
}

Result<UniformGridPoint> FastestGridPoint(const std::vector<UniformGridPoint>& grid) {
  const UniformGridPoint* fastest = nullptr;
  for (const UniformGridPoint& point : grid) {
    if (point.plan.ok() && (!fastest || point.plan->step_time_s < fastest->plan->step_time_s)) {
      fastest = &point;
    }
  }
  if (!fastest) {
    return NotFound(
        "no point of the uniform grid fits; `alpa plan ... --method uniform --json` "
        "lists each point's reason");
  }
  return *fastest;
}

}  // namespace alpa::plan
