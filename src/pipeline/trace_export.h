// Timelines of a simulated pipeline step (simulator.h), for people to look at.
//
// Chrome trace: the JSON object format that chrome://tracing and Perfetto open:
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
// one complete event ("ph": "X") per task with ts/dur in microseconds, pid 0, tid = device,
// name "F3"/"B3" ("F3.1" with chunks), cat "forward"/"backward", and args with the micro-batch,
// virtual stage and chunk; plus "M" metadata events naming the process and each device's thread.
//
// SVG Gantt chart: self-contained SVG 1.1 text, one row per device, one <rect class="task fwd">
// or <rect class="task bwd"> per task with its micro-batch number in it, a time axis with ticks,
// and a title with the schedule, step time and bubble fraction. Text is XML-escaped.
#ifndef ALPA_PIPELINE_TRACE_EXPORT_H_
#define ALPA_PIPELINE_TRACE_EXPORT_H_

#include <string>
#include <string_view>

#include "pipeline/simulator.h"
#include "support/status.h"

namespace alpa::pipeline {

std::string ToChromeTrace(const SimulationResult& result);

// `title` (optional) goes before the generated summary in the chart's heading.
std::string ToSvgGantt(const SimulationResult& result, std::string_view title = "");

// Write the above to `path`; the error names the path.
Status WriteChromeTrace(const SimulationResult& result, const std::string& path);
Status WriteSvgGantt(const SimulationResult& result, const std::string& path,
                     std::string_view title = "");

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_TRACE_EXPORT_H_
