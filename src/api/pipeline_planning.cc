#include "api/pipeline_planning.h"

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <utility>
#include <vector>

#include "hlo/printer.h"
#include "pipeline/layer_marking.h"
#include "pipeline/trace_export.h"
#include "plan/pipeshard_document.h"
#include "support/fingerprint.h"

namespace alpa::api {
namespace {

// Dimension 0 of the loss's first batch parameter: the micro-batch's size (0 for a scalar).
int64_t MicroBatchSize(const models::Model& model) {
  const std::set<int64_t> weights(model.weights.begin(), model.weights.end());
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (weights.contains(static_cast<int64_t>(p))) continue;
    const ir::Shape& shape = parameters[p]->shape();
    return shape.IsArray() && shape.rank() > 0 ? shape.dim(0) : 0;
  }
  return 0;
}

}  // namespace

Result<PlannedPipeline> PlanPipeline(models::ZooModel model, const cluster::ClusterSpec& cluster,
                                     const PipelinePlanRequest& request) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const Clock::time_point start = Clock::now();
  // The planner sees the budget as its devices' memory.
  const cluster::ClusterSpec budgeted =
      request.memory_budget_bytes ? cluster::WithDeviceMemory(cluster, *request.memory_budget_bytes)
                                  : cluster;
  if (request.auto_layers) {
    Result<pipeline::LayerMarkingStats> marked =
        pipeline::MarkAutoLayers(*model.model.loss->entry(), *request.auto_layers);
    if (!marked.ok()) {
      return marked.status().WithContext(fmt::format("{} layers", *request.auto_layers));
    }
  }
  const models::Model& loss = model.model;
  plan::PipelineSearchOptions search = request.search;
  if (request.saved) {  // read before the costs: the sub-meshes its stages name are costed
    plan::document::RunIdentity run;  // a pipelined plan fingerprints the loss only
    run.model = model.entry.name;
    run.loss_fingerprint = FingerprintHex(hlo::PrintModule(*loss.loss));
    run.cluster = request.cluster_text;
    ALPA_ASSIGN_OR_RETURN(search.manual, plan::document::PipelinedStagesOf(
                                             request.saved->document, request.saved->source, run));
  }
  PlannedPipeline planned;
  ALPA_ASSIGN_OR_RETURN(planned.table, plan::PipelineLayerCosts(*loss.loss, loss.weights,
                                                                model.training, budgeted, search));
  const double layer_costs_s = seconds_since(start);
  const Clock::time_point dp_start = Clock::now();
  const int64_t micro_batches = model.training.num_micro_batches;
  Result<plan::PipeshardPlan> stages =
      plan::PlanStages(planned.table, budgeted, micro_batches, search);
  if (!stages.ok() && request.saved) return stages.status().WithContext(request.saved->source);
  ALPA_ASSIGN_OR_RETURN(planned.plan, std::move(stages));
  const double stage_dp_s = seconds_since(dp_start);

  plan::PipeshardReport report =
      plan::ReportOfPlan(*loss.loss, planned.table, budgeted, planned.plan,
                         request.search.planner.schedules, /*grid=*/{});
  report.method = "pipeshard";
  report.model_name = model.entry.name;
  report.cluster = request.cluster_text;
  report.memory_budget_bytes = request.memory_budget_bytes;
  report.micro_batch_size = MicroBatchSize(loss);
  report.layer_costs_s = layer_costs_s;
  report.stage_dp_s = stage_dp_s;
  if (std::optional<std::string> warning = plan::FewMicroBatchesWarning(planned.plan)) {
    report.warnings.push_back(std::move(*warning));
  }
  report.total_s = seconds_since(start);
  planned.document = plan::PipeshardPlanJson(report, planned.table, cluster, planned.plan);
  planned.text = plan::PipeshardPlanText(report, planned.table, planned.plan);
  planned.timeline_svg = pipeline::ToSvgGantt(planned.plan.simulation, report.model_name);
  planned.model = std::move(model);
  return planned;
}

}  // namespace alpa::api
