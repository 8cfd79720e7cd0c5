// The pipelined plan's document: what `alpa plan --method pipeshard -o plan.json` writes for a plan
// (PipeshardPlanJson, from the plan and what was gathered around it: the alternatives, the
// model's names, the timings), and what `alpa run --plan` and `alpa explain` read back
// (plan_document.h: ReadSavedPipelinedStages); PipeshardPlanText is the text `alpa plan` prints.
//
// The document, version 2 (version 1's header, api/single_stage_document.h, with "stages",
// "schedule", "num_micro_batches" and the estimate of the whole pipeline):
//
//   {"format": "alpa-plan", "version": 2, "model": {"name", "fingerprint"}, "cluster",
//    "cluster_shape": {"hosts", "devices_per_host", "device", "device_memory_bytes" (the first
//                      host's), "host_types": [{"hosts": [indices], "devices_per_host",
//                      "device", "device_memory_bytes"}] (several on a heterogeneous cluster)},
//    "memory_budget_bytes" (--memory-budget, the memory every stage was planned in; null
//                           without it),
//    "method": "pipeshard" or "uniform", "schedule", "num_chunks" (per device: > 1 under
//    interleaved 1F1B, stage j on stage j % (stages / num_chunks)'s devices),
//    "num_micro_batches", "micro_batch_size",
//    "num_layers" (the model's layers, which stages' "layers" index),
//    "estimate": {"step_time_s", "pipeline_s", "alpa_formula_s", "bubble_fraction",
//                 "transfer_bytes_per_step", "tflops"},
//    "stages": [{"layers": [first, last], "devices", "device_type", "submesh", "logical_mesh",
//                "mesh_config",
//                "force_batch_dim_to_mesh_dim" (0 or null), "forward_time_s",
//                "backward_time_s", "update_time_s", "peak_memory_bytes",
//                "device_memory_bytes" (what the stage may use: --memory-budget when given),
//                "memory": {"static_bytes", "activation_bytes_per_micro_batch",
//                           "micro_batches_in_flight", "temporary_bytes",
//                           "pending_gradient_bytes", "update_temporary_bytes"},
//                "comm": {"all-reduce", ...}, "parameters": [{"name", "sharding"}]}],
//    "warnings": [text] (fewer micro-batches than pipeline stages, when the count was given),
//    "alternatives": [{"name": "data parallel" | "best uniform grid point", "dp", "op", "pp",
//                      "step_time_s" (null when it does not fit), "error"}],
//    "grid": [...] (--method uniform's search),
//    "stage_dp": {"candidates": [{"source": "stage DP" | "stage DP in 2 chunks" | "given" (the
//                                 uniform grid's stages, simulated beside the DP's),
//                                 "num_chunks", "stages": [{"layers", "submesh", "logical_mesh",
//                                 "mesh_config"}], "dp_objective_s" (the DP's; null for others),
//                                 "step_time_s" (best schedule; null when it does not fit),
//                                 "schedule", "error"}]} (every stage list simulated, in order;
//                                 empty for stages given, --method uniform),
//    "micro_batch_search": [{"num_micro_batches", "step_time_s", "error"}]
//    (--search-micro-batches),
//    "compile": {"total_s", "layer_costs_s", "stage_dp_s", "alternatives_s", "distinct_layers",
//                "mesh_configs", "intra_op_solves", "candidates_evaluated"}}
#ifndef ALPA_PLAN_PIPESHARD_DOCUMENT_H_
#define ALPA_PLAN_PIPESHARD_DOCUMENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_spec.h"
#include "ir/module.h"
#include "pipeline/schedule.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "plan/uniform_plans.h"

namespace alpa::plan {

// What the command gathered around a plan: the alternatives, the model's names and the timings.
struct PipeshardReport {
  std::string method;
  std::vector<UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  // What a user would try instead: pure data parallel and the best uniform grid point.
  std::vector<std::pair<std::string, UniformGridPoint>> alternatives;
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

// The report's fields every caller fills the same way for `plan` of `loss` on `cluster`: the
// alternatives priced on `table` under `schedules` (pure data parallel and the best point of
// `grid`, the uniform grid searched here when `grid` is empty) and the time they took, the loss's
// parameter names and fingerprint, the devices and the whole step's FLOPs. The caller adds the
// method, the model's and the cluster's names, its timings and its warnings.
PipeshardReport ReportOfPlan(const ir::Module& loss, const LayerCostTable& table,
                             const cluster::ClusterSpec& cluster, const PipeshardPlan& plan,
                             const std::vector<pipeline::ScheduleKind>& schedules,
                             std::vector<UniformGridPoint> grid);

// A micro-batch count the user fixed below the plan's pipeline depth leaves stages idle most of
// the step, and Alpa's formula sum t + (B - 1) max t, which assumes a steady state where every
// stage is busy, is no guide there: the step time is the simulator's.
std::optional<std::string> FewMicroBatchesWarning(const PipeshardPlan& plan);

// A stage's "memory" object (above): what its devices hold at their peak.
nlohmann::ordered_json StageMemoryJson(const PlannedStage& stage);

// The plan document (above); `cluster` as described, before any budget.
nlohmann::ordered_json PipeshardPlanJson(const PipeshardReport& report, const LayerCostTable& table,
                                         const cluster::ClusterSpec& cluster,
                                         const PipeshardPlan& plan);

// The plan as `alpa plan` prints it: the step time, the stages and the alternatives.
std::string PipeshardPlanText(const PipeshardReport& report, const LayerCostTable& table,
                              const PipeshardPlan& plan);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PIPESHARD_DOCUMENT_H_
