// `alpa explain PLAN.json [--json]`: why a saved plan (`alpa plan -o`) is what it is.
//
// For a pipelined plan (version 2), per stage:
//   busy     = num_micro_batches x (forward + backward per micro-batch) + update
//   memory   = static + in flight x activations per micro-batch + temporaries, against the
//              device's memory (the share used)
// the bottleneck stage (the largest forward + backward: the 1F1B steady state runs at its pace),
// the pipeline's bubble, and the alternatives the planner priced on the same costs (pure data
// parallel, the best uniform grid point) with their ratio to this plan, or why they do not fit.
// For a single-stage plan (version 1): the step time split into compute, communication and
// resharding, the peak memory against the budget and the collectives.
//
// --json prints the same as {"kind": "pipeline" | "single-stage", "step_time_s",
//   "stages": [{"index", "busy_s", "time_share", "memory_share", "bottleneck"}],
//   "alternatives": [{"name", "step_time_s", "ratio", "error"}]} (single-stage: "breakdown").
// A file that is not a plan document is bad input (exit 2) naming the file and the field.
#ifndef ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_
#define ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "support/status.h"

namespace alpa::tools {

struct ExplainOptions {
  std::string plan_path;
  bool json = false;
};

CLI::App* AddExplainCommand(CLI::App& app, ExplainOptions& options);

// The explanation of a plan document: the text, and the same as JSON.
struct Explanation {
  std::string text;
  nlohmann::ordered_json json;
};
Result<Explanation> ExplainPlan(const nlohmann::ordered_json& plan, const std::string& source);

// Returns the process exit code (command_util.h).
int RunExplain(const ExplainOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_
