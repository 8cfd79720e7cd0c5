#include "pipeline/trace_export.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "support/file.h"
#include "support/markup.h"
#include "support/units.h"

namespace alpa::pipeline {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

// A tick spacing of 1, 2 or 5 times a power of ten giving at most about `max_ticks` ticks.
double TickStep(double span, int max_ticks) {
  const double raw = span / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

}  // namespace

std::string ToChromeTrace(const SimulationResult& result) {
  const bool with_chunk = result.num_chunks > 1;
  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", 0},
       {"args", {{"name", fmt::format("pipeline ({})", ScheduleKindName(result.schedule))}}}});
  for (int d = 0; d < result.num_devices; ++d) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", d},
                      {"args", {{"name", fmt::format("stage {}", d)}}}});
  }
  for (const TaskTiming& timing : result.tasks) {
    const bool forward = timing.task.kind == TaskKind::kForward;
    events.push_back({{"name", TaskName(timing.task, with_chunk)},
                      {"cat", forward ? "forward" : "backward"},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", timing.device},
                      {"ts", timing.start_s * kMicrosecondsPerSecond},
                      {"dur", (timing.end_s - timing.start_s) * kMicrosecondsPerSecond},
                      {"args",
                       {{"micro_batch", timing.task.micro_batch},
                        {"stage", timing.stage},
                        {"chunk", timing.task.chunk}}}});
  }
  nlohmann::json trace = {{"traceEvents", events},
                          {"displayTimeUnit", "ms"},
                          {"otherData",
                           {{"schedule", ScheduleKindName(result.schedule)},
                            {"num_devices", result.num_devices},
                            {"num_micro_batches", result.num_micro_batches},
                            {"num_chunks", result.num_chunks},
                            {"step_time_s", result.step_time_s},
                            {"bubble_fraction", result.bubble_fraction},
                            {"critical_path_s", result.critical_path_s}}}};
  return trace.dump(1);
}

std::string ToSvgGantt(const SimulationResult& result, std::string_view title) {
  constexpr double kLeft = 80, kRight = 20, kTop = 50, kRow = 32, kBox = 24, kPlotWidth = 900;
  constexpr double kAxis = 40;
  const double width = kLeft + kPlotWidth + kRight;
  const double height = kTop + kRow * result.num_devices + kAxis;
  const double span = result.step_time_s > 0 ? result.step_time_s : 1.0;
  auto x_of = [&](double t) { return kLeft + t / span * kPlotWidth; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n",
      width, height, width, height);
  svg +=
      "<style>.fwd{fill:#4e79a7}.bwd{fill:#f28e2b}.task{stroke:#ffffff;stroke-width:0.5}"
      ".label{fill:#ffffff;text-anchor:middle}.axis{stroke:#444444}</style>\n";
  svg +=
      fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", width, height);
  std::string heading =
      fmt::format("{} schedule, {} stages x {} micro-batches{}: step time {}, bubble {:.1f}%",
                  ScheduleKindName(result.schedule), result.num_devices, result.num_micro_batches,
                  result.num_chunks > 1 ? fmt::format(" x {} chunks", result.num_chunks) : "",
                  FormatSeconds(result.step_time_s), 100 * result.bubble_fraction);
  if (!title.empty()) heading = fmt::format("{}: {}", title, heading);
  svg += fmt::format("<text x=\"{:.0f}\" y=\"24\" font-size=\"14\">{}</text>\n", kLeft,
                     EscapeMarkup(heading));

  for (int d = 0; d < result.num_devices; ++d) {
    const double y = kTop + kRow * d;
    svg += fmt::format("<text x=\"8\" y=\"{:.1f}\">stage {}</text>\n", y + kBox / 2 + 4, d);
  }
  const bool with_chunk = result.num_chunks > 1;
  for (const TaskTiming& timing : result.tasks) {
    const bool forward = timing.task.kind == TaskKind::kForward;
    const double x = x_of(timing.start_s);
    const double w = x_of(timing.end_s) - x;
    const double y = kTop + kRow * timing.device;
    svg += fmt::format(
        "<rect class=\"task {}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\">"
        "<title>{}</title></rect>\n",
        forward ? "fwd" : "bwd", x, y, w, kBox,
        EscapeMarkup(fmt::format("{} on stage {}: {} .. {}", TaskName(timing.task, with_chunk),
                                 timing.stage, FormatSeconds(timing.start_s),
                                 FormatSeconds(timing.end_s))));
    const std::string label = with_chunk
                                  ? fmt::format("{}.{}", timing.task.micro_batch, timing.task.chunk)
                                  : fmt::format("{}", timing.task.micro_batch);
    if (w >= 8.0 * static_cast<double>(label.size())) {
      svg += fmt::format("<text class=\"label\" x=\"{:.2f}\" y=\"{:.1f}\">{}</text>\n", x + w / 2,
                         y + kBox / 2 + 4, EscapeMarkup(label));
    }
  }

  const double axis_y = kTop + kRow * result.num_devices + 4;
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\"/>\n", kLeft,
      axis_y, kLeft + kPlotWidth, axis_y);
  const double step = TickStep(span, 10);
  for (int i = 0; i * step <= span * (1 + 1e-9); ++i) {
    const double t = i * step;
    const double x = x_of(t);
    svg += fmt::format(
        "<line class=\"axis\" x1=\"{:.2f}\" y1=\"{:.1f}\" x2=\"{:.2f}\" y2=\"{:.1f}\"/>"
        "<text x=\"{:.2f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
        x, axis_y, x, axis_y + 5, x, axis_y + 18, EscapeMarkup(FormatSeconds(t)));
  }
  svg += "</svg>\n";
  return svg;
}

Status WriteChromeTrace(const SimulationResult& result, const std::string& path) {
  return WriteStringToFile(path, ToChromeTrace(result));
}

Status WriteSvgGantt(const SimulationResult& result, const std::string& path,
                     std::string_view title) {
  return WriteStringToFile(path, ToSvgGantt(result, title));
}

}  // namespace alpa::pipeline
