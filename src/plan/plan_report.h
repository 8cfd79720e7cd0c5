// The HTML report of a pipeline plan (`alpa plan MODEL --cluster SPEC --method pipeshard
// --report plan.html`): one self-contained page, inline CSS and inline SVG, no scripts and no
// external resources, so it can be mailed or attached to a ticket and opened anywhere.
//
// Sections, top to bottom:
//   1. Summary: model, cluster and its device, method, schedule, micro-batches x size, step
//      time, pipeline bubble, TFLOPS per device, the compile-time breakdown.
//   2. Cluster: every host a row of device squares (labelled with the global device id), each
//      filled with its stage's colour (StageColor; grey for a device in no stage), and a legend
//      "stage j: layers a..b, mesh config".
//   3. Timeline: the simulated step's Gantt chart, embedded as given.
//   4. Memory per stage: stacked bars of static bytes, activations (in flight x per
//      micro-batch) and temporaries against the device's memory; a stage over it in red.
//   5. Stages: a table of layers, devices, mesh config, forward/backward per micro-batch,
//      update, peak memory against the device's, collectives by kind.
//   6. Parameter shardings: per stage a collapsible table parameter -> XLA sharding.
//   7. Alternatives: step time of this plan and of each alternative as bars, with the ratio
//      to this plan; the ones that do not fit listed with the reason.
//
// The input is the plan document of plan/pipeshard_document.h (version 2). The caller passes
// such a document; the renderer does not check "format" or "version" and draws what is there:
// a missing field shows as "-", a missing list (stages, parameters, alternatives) leaves its
// section out, and nothing throws. Every text from the document is HTML-escaped. The output
// depends on the arguments only (same document, same bytes).
#ifndef ALPA_PLAN_PLAN_REPORT_H_
#define ALPA_PLAN_PLAN_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace alpa::plan {

// The plan document as one HTML page. `timeline_svg` is the simulated step's Gantt chart
// (pipeline::ToSvgGantt), a complete <svg> element embedded unescaped; empty: "no timeline".
std::string RenderPlanReport(const nlohmann::ordered_json& plan, std::string_view timeline_svg);

// The colour ("#rrggbb") of stage `stage` (>= 0) in the report: a fixed palette of 12
// qualitative colours, cycled, none equal to the timeline's forward blue or backward orange.
std::string_view StageColor(int stage);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PLAN_REPORT_H_
