// Planning a loss for a pipeline from a program rather than the command line (the Python
// package's PipeshardParallel): what `alpa plan LOSS --weights W --method pipeshard
// --micro-batches M` does, handing back the plan document, its text and the simulated step's
// timeline instead of printing them. Given a saved plan document instead, its stages are
// re-costed for the loss and cluster, as `alpa run --plan plan.json` runs them.
//
//   models::ZooModel loss = api::ImportHloLossText(text, "loss", {.weights = "0-5"}).value();
//   loss.training.num_micro_batches = 4;
//   api::PlannedPipeline planned = api::PlanPipeline(std::move(loss), cluster, request).value();
//   planned.document;  // plan/pipeshard_document.h: what `alpa explain` and `alpa run --plan` read
#ifndef ALPA_API_PIPELINE_PLANNING_H_
#define ALPA_API_PIPELINE_PLANNING_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cluster/cluster_spec.h"
#include "models/zoo.h"
#include "plan/layer_costs.h"
#include "plan/pipeline_search.h"
#include "plan/pipeshard_planner.h"
#include "plan/plan_document.h"
#include "support/status.h"

namespace alpa::api {

// A pipelined plan document (plan/pipeshard_document.h: PlannedPipeline::document, `alpa plan
// -o`), named `source` in errors (its path, say).
struct SavedPipelinePlan {
  plan::document::Json document;
  std::string source;
};

struct PipelinePlanRequest {
  // The search: sub-mesh and logical spaces, the intra-op solver's settings, and in
  // planner.schedules the schedules to try (its micro-batch count is the model's).
  plan::PipelineSearchOptions search;
  // The model's layers: its own markers (Alpa's pipeline markers), or with a count, the layers
  // automatic layer construction finds (pipeline::MarkAutoLayers, `--auto-layers`).
  std::optional<int64_t> auto_layers;
  std::string cluster_text;  // the cluster as the user wrote it, for the document
  // Each device's memory to plan in, below the cluster's; the document keeps both.
  std::optional<int64_t> memory_budget_bytes;
  // Stages to take instead of searching: the saved plan's, which must have been made for this
  // loss (its name and fingerprint, the layers marked as above) on this cluster_text.
  std::optional<SavedPipelinePlan> saved;
};

struct PlannedPipeline {
  // The model planned, its loss marked with the layers the plan cuts (automatic layers included):
  // what ParallelizePipeshard runs the plan on.
  models::ZooModel model;
  plan::LayerCostTable table;
  plan::PipeshardPlan plan;
  nlohmann::ordered_json document;  // plan/pipeshard_document.h
  std::string text;                 // as `alpa plan` prints it
  std::string timeline_svg;         // the simulated step's Gantt chart (pipeline::ToSvgGantt)
};

// Plans `model` (its loss at the micro-batch size, its weights, and training.num_micro_batches
// micro-batches a step) on `cluster`, or re-costs the request's saved stages there. Errors: the
// layer construction's, the search's (a model that fits nowhere says what it needs); a saved plan
// made for another run (every differing field named), or whose stages no longer resolve or fit
// (the stage named).
Result<PlannedPipeline> PlanPipeline(models::ZooModel model, const cluster::ClusterSpec& cluster,
                                     const PipelinePlanRequest& request);

}  // namespace alpa::api

#endif  // ALPA_API_PIPELINE_PLANNING_H_
