// Why a plan document (pipeshard_document.h, or a single-stage one) is what it is: what
// `alpa explain` prints and the Python package's Plan.explain() returns.
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
// The JSON: {"kind": "pipeline" | "single-stage", "step_time_s",
//   "stages": [{"index", "busy_s", "time_share", "memory_share", "bottleneck"}],
//   "alternatives": [{"name", "step_time_s", "ratio", "error"}]} (single-stage: "breakdown").
#ifndef ALPA_PLAN_PLAN_EXPLANATION_H_
#define ALPA_PLAN_PLAN_EXPLANATION_H_

#include <nlohmann/json.hpp>
#include <string>

#include "support/status.h"

namespace alpa::plan {

// The explanation of a plan document: the text, and the same as JSON.
struct Explanation {
  std::string text;
  nlohmann::ordered_json json;
};

// Errors (naming `source`, the document's file or origin, and the field): a document that is
// not a plan, of a version this build does not read, or missing a figure the explanation needs.
Result<Explanation> ExplainPlan(const nlohmann::ordered_json& plan, const std::string& source);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PLAN_EXPLANATION_H_
