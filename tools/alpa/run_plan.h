// `alpa run MODEL --cluster SPEC --plan plan.json`: runs a plan `alpa plan ... -o plan.json` saved
// (the single-stage document of plan_command.h). Re-planning the same step with every
// instruction's saved strategy pinned (AutoShardingOptions::pinned_strategies) reproduces the
// plan exactly, partial sums included, at the cost of one solver call with a single allowed
// choice per node.
//
// The plan must be for this model, config and cluster: the model's name and its train step's
// fingerprint (which changes with --batch, --dtype, --optimizer, ...) and the cluster text are
// compared, and every field that differs is named with both values. A pipelined plan (the
// document of pipeshard_plan.h, with stages) runs on the pipeline runtime (pipeshard_run.h):
// ReadPipelinedRunPlan gives its stages.
#ifndef ALPA_TOOLS_ALPA_RUN_PLAN_H_
#define ALPA_TOOLS_ALPA_RUN_PLAN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "plan/manual_stages.h"
#include "support/status.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct RunPlan {
  std::string method;
  std::string mesh;  // "2x2"
  std::optional<int64_t> batch_axis;
  std::map<std::string, std::string> strategies;  // instruction -> strategy name
  double step_time_s = 0;                         // the saved estimate
};

// The stages of `path` when it is a pipelined plan (nullopt for a single-stage plan), checked to
// be for `zoo`'s loss (its fingerprint) and `cluster`; errors name every field that differs.
Result<std::optional<plan::ManualStages>> ReadPipelinedRunPlan(const std::string& path,
                                                               const ZooStep& zoo,
                                                               const std::string& cluster);

// Reads `path` for `zoo`'s train step on `cluster` (the --cluster text).
Result<RunPlan> ReadRunPlan(const std::string& path, const ZooStep& zoo,
                            const std::string& cluster);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_RUN_PLAN_H_
