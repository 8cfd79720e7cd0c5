// What `alpa plan` writes for a pipelined plan: the plan document (its format is in
// pipeshard_plan.h) and the text it prints, from the plan and what the command gathered around it.
#ifndef ALPA_TOOLS_ALPA_PIPESHARD_DOCUMENT_H_
#define ALPA_TOOLS_ALPA_PIPESHARD_DOCUMENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_spec.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "plan/uniform_plans.h"

namespace alpa::tools {

// What the command gathered around a plan: the alternatives, the model's names and the timings.
struct PipeshardReport {
  std::string method;
  std::vector<plan::UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  // What a user would try instead: pure data parallel and the best uniform grid point.
  std::vector<std::pair<std::string, plan::UniformGridPoint>> alternatives;
  std::vector<std::string> parameter_names;  // of the model's loss, by parameter number
  std::string model_name;
  std::string fingerprint;
  std::string cluster;
  std::optional<int64_t> memory_budget_bytes;  // --memory-budget: each device's memory to plan
  int64_t micro_batch_size = 0;
  double step_flops = 0;  // of the whole batch (all micro-batches), every layer's step
  double devices = 1;
  double total_s = 0;
  double layer_costs_s = 0;
  double stage_dp_s = 0;
  double alternatives_s = 0;
  std::vector<std::string> warnings;  // printed and in the JSON
};

// A micro-batch count the user fixed below the plan's pipeline depth leaves stages idle most of
// the step, and Alpa's formula sum t + (B - 1) max t, which assumes a steady state where every
// stage is busy, is no guide there: the step time is the simulator's.
std::optional<std::string> FewMicroBatchesWarning(const plan::PipeshardPlan& plan);

// The plan document, version 2 (pipeshard_plan.h); `cluster` as described, before any budget.
nlohmann::ordered_json PlanJson(const PipeshardReport& report, const plan::LayerCostTable& table,
                                const cluster::ClusterSpec& cluster,
                                const plan::PipeshardPlan& plan);

// The plan as `alpa plan` prints it: the step time, the stages and the alternatives.
std::string PlanText(const PipeshardReport& report, const plan::LayerCostTable& table,
                     const plan::PipeshardPlan& plan);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PIPESHARD_DOCUMENT_H_
