// alpa_cpp._core.plan_pipeline (PipeshardParallel's planning of a loss lowered by JAX,
// api/pipeline_planning.h), and what people read of any plan document: explain_plan
// (plan/plan_explanation.h) and render_plan_report (plan/plan_report.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "api/imported_model.h"
#include "api/pipeline_planning.h"
#include "autodiff/optimizer.h"
#include "bindings.h"
#include "pipeline/schedule.h"
#include "plan/plan_explanation.h"
#include "plan/plan_report.h"
#include "python_objects.h"
#include "support/json_text.h"

namespace nb = nanobind;

namespace alpa::python {
namespace {

using Json = nlohmann::ordered_json;

// The search `alpa plan --method pipeshard` makes with the same flags (tools/alpa/plan_command.h
// holds their defaults, which the Python method's match).
Result<plan::PipelineSearchOptions> SearchOptions(const std::string& schedule,
                                                  const std::string& logical_space,
                                                  const std::string& submesh_space,
                                                  double time_limit_s) {
  plan::PipelineSearchOptions search;
  ALPA_ASSIGN_OR_RETURN(search.planner.schedules, pipeline::ParseSchedules(schedule));
  Result<plan::LogicalSpace> logical = plan::ParseLogicalSpace(logical_space);
  if (!logical.ok()) return logical.status().WithContext("logical_space");
  search.logical = *logical;
  Result<cluster::SubmeshSpace> submeshes = plan::ParseSubmeshSpace(submesh_space);
  if (!submeshes.ok()) return submeshes.status().WithContext("submesh_space");
  search.submeshes = *submeshes;
  if (!(time_limit_s > 0)) {
    return InvalidArgument("time_limit_s {}: it must be positive", time_limit_s);
  }
  search.costs.auto_sharding.solve.time_limit_s = time_limit_s;
  return search;
}

Json ParseDocument(const std::string& text) {
  Result<Json> document = ParseJsonText(text, "plan document");
  RaiseIfError(document.status());
  return std::move(document).value();
}

}  // namespace

void BindPlans(nb::module_& module) {
  module.def(
      "plan_pipeline",
      [](const std::string& loss_text, const std::string& name, const std::string& weights,
         const ClusterHandle& cluster, int64_t num_micro_batches, const std::string& schedule,
         std::optional<int64_t> auto_layers, bool remat, const std::string& optimizer,
         std::optional<int64_t> memory_budget_bytes, const std::string& logical_space,
         const std::string& submesh_space, double time_limit_s) {
        if (num_micro_batches < 1) {
          Raise(InvalidArgument("num_micro_batches {}: it must be at least 1", num_micro_batches));
        }
        api::PipelinePlanRequest request;
        request.search =
            ValueOrRaise(SearchOptions(schedule, logical_space, submesh_space, time_limit_s));
        request.auto_layers = auto_layers;
        request.cluster_text = cluster.argument;
        request.memory_budget_bytes = memory_budget_bytes;
        models::ZooModel model = ValueOrRaise(
            api::ImportHloLossText(loss_text, name, {.weights = weights, .batch = {}}));
        model.training.num_micro_batches = num_micro_batches;
        model.training.remat = remat;
        Result<autodiff::OptimizerKind> kind = autodiff::ParseOptimizer(optimizer);
        if (!kind.ok()) Raise(kind.status().WithContext("PipeshardParallel(optimizer=...)"));
        model.training.optimizer.kind = *kind;
        Result<api::PlannedPipeline> planned = [&] {
          nb::gil_scoped_release unlocked;  // planning takes seconds; other threads may run
          return api::PlanPipeline(std::move(model), cluster.spec, request);
        }();
        RaiseIfError(planned.status());
        return std::make_tuple(planned->document.dump(2), planned->text, planned->timeline_svg);
      },
      nb::arg("loss_text"), nb::arg("name"), nb::arg("weights"), nb::arg("cluster"),
      nb::arg("num_micro_batches"), nb::arg("schedule") = "auto",
      nb::arg("auto_layers") = nb::none(), nb::arg("remat") = false, nb::arg("optimizer") = "adam",
      nb::arg("memory_budget_bytes") = nb::none(), nb::arg("logical_space") = "single-node",
      nb::arg("submesh_space") = "power-of-two", nb::arg("time_limit_s") = 30.0,
      "Plans the HLO loss `loss_text` (its `weights` as `alpa plan --weights` takes them) for a "
      "pipeline, as `alpa plan --method pipeshard` does; returns (document JSON, text, "
      "timeline SVG).");
  module.def(
      "explain_plan",
      [](const std::string& document) {
        plan::Explanation explanation =
            ValueOrRaise(plan::ExplainPlan(ParseDocument(document), "plan"));
        return std::make_tuple(explanation.text, explanation.json.dump(2));
      },
      nb::arg("document"), "(text, JSON) of `alpa explain` for a plan document.");
  module.def(
      "render_plan_report",
      [](const std::string& document, const std::string& timeline_svg) {
        return plan::RenderPlanReport(ParseDocument(document), timeline_svg);
      },
      nb::arg("document"), nb::arg("timeline_svg") = "",
      "The plan document as one self-contained HTML page (`alpa plan --report`).");
}

}  // namespace alpa::python
