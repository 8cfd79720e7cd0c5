// What people read of any plan document: explain_plan (plan/plan_explanation.h) and
// render_plan_report (plan/plan_report.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <string>
#include <tuple>
#include <utility>

#include "bindings.h"
#include "plan/plan_explanation.h"
#include "plan/plan_report.h"
#include "support/json_text.h"

namespace nb = nanobind;

namespace alpa::python {
namespace {

using Json = nlohmann::ordered_json;

Json ParseDocument(const std::string& text) {
  Result<Json> document = ParseJsonText(text, "plan document");
  RaiseIfError(document.status());
  return std::move(document).value();
}

}  // namespace

void BindPlans(nb::module_& module) {
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
