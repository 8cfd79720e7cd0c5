// `alpa plan MODEL --cluster SPEC --method pipeshard`: pipeline stages on sub-meshes with
// intra-op sharding inside each (src/plan/pipeshard_planner.h), for zoo models (their layers come
// from the model's layer markers).
//
//   alpa plan gpt-2.6b --cluster p3.16xlarge:1x8 --batch 1024 --micro-batches 128
//             --method pipeshard [--schedule 1f1b|gpipe|auto] [--logical-space all|single-node]
//             [--submesh-space power-of-two|small-power-of-two|all] [--imbalance-tolerance T]
//             [--search-micro-batches] [--validate plan.json] [--report plan.html]
//             [--json] [-o plan.json]
//
// --method uniform --dp D --op O --pp P evaluates Megatron-style hand plans (plan/manual_stages.h,
// UniformStages) on the same layer costs; without the three, every grid point, the fastest kept
// and the grid listed ("grid": [{"dp", "op", "pp", "step_time_s", "error"}]).
//
// --search-micro-batches plans at 1, 2, 4, ... micro-batches (dividing the batch) and keeps the
// fastest, stopping two counts after the step time stops improving. --validate FILE re-costs a
// saved plan's stages (plan::ParseSavedPlanStages) for this model on this cluster at the saved
// micro-batch count: the same document on success, bad input naming the stage that no longer
// fits (and what it needs) otherwise. --report FILE writes plan_report.h's HTML page.
//
// Prints the stages (layers, sub-mesh, logical mesh, devices, per-micro-batch times, update,
// peak memory against the device's), the simulated step time beside Alpa's closed formula, the
// alternatives and the compile-time breakdown; --json prints the plan document (version 2:
// version 1's header with "stages", "schedule", "num_micro_batches" and the estimate of the whole
// pipeline), which `alpa explain` reads:
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
//                 "tflops"},
//    "stages": [{"layers": [first, last], "devices", "device_type", "submesh", "logical_mesh",
//                "mesh_config",
//                "force_batch_dim_to_mesh_dim" (0 or null), "forward_time_s",
//                "backward_time_s", "update_time_s", "peak_memory_bytes",
//                "device_memory_bytes" (what the stage may use: --memory-budget when given),
//                "memory": {"static_bytes", "activation_bytes_per_micro_batch",
//                           "micro_batches_in_flight", "temporary_bytes",
//                           "update_temporary_bytes"},
//                "comm": {"all-reduce", ...}, "parameters": [{"name", "sharding"}]}],
//    "warnings": [text] (fewer micro-batches than pipeline stages, when the count was given),
//    "alternatives": [{"name": "data parallel" | "best uniform grid point", "dp", "op", "pp",
//                      "step_time_s" (null when it does not fit), "error"}],
//    "grid": [...] (--method uniform's search), "micro_batch_search": [{"num_micro_batches",
//    "step_time_s", "error"}] (--search-micro-batches),
//    "compile": {"total_s", "layer_costs_s", "stage_dp_s", "alternatives_s", "distinct_layers",
//                "mesh_configs", "intra_op_solves", "candidates_evaluated"}}
#ifndef ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_
#define ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_

#include "tools/alpa/plan_command.h"

namespace alpa::tools {

// Returns the process exit code (command_util.h).
int RunPipeshardPlan(const PlanOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_
