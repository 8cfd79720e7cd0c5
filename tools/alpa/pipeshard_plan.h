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
// alternatives and the compile-time breakdown; --json prints the plan document
// (plan/pipeshard_document.h), which `alpa explain` and `alpa run --plan` read.
#ifndef ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_
#define ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_

#include "tools/alpa/plan_command.h"

namespace alpa::tools {

// Returns the process exit code (command_util.h).
int RunPipeshardPlan(const PlanOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PIPESHARD_PLAN_H_
