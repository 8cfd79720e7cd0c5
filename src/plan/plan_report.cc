#include "plan/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "plan/plan_document.h"
#include "support/markup.h"
#include "support/units.h"

namespace alpa::plan {
namespace {

using Json = nlohmann::ordered_json;
using document::DeviceRange;
using document::Devices;
using document::Field;
using document::Integers;
using document::Items;
using document::LayerRange;
using document::Number;
using document::Text;

// Tableau 10 without its blue and orange (the timeline's forward and backward tasks) plus four
// of Tableau 20's lighter shades: distinct at a glance and readable under dark text.
constexpr std::array<std::string_view, 12> kStagePalette = {
    "#59a14f", "#af7aa1", "#e15759", "#76b7b2", "#edc948", "#ff9da7",
    "#9c755f", "#8cd17d", "#b6992d", "#499894", "#d37295", "#a0cbe8"};
constexpr std::string_view kNoStageColor = "#d0d7de";

// The page's only style sheet. Class names avoid the timeline SVG's own (task, fwd, bwd, label,
// axis): a <style> inside inline SVG applies to the whole document.
constexpr std::string_view kStyle = R"css(
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:#1f2328;
  font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1060px;margin:0 auto;padding:28px 24px 48px}
h1{font-size:26px;line-height:1.25;margin:0 0 4px}
h2{font-size:18px;margin:0 0 12px}
.meta{color:#57606a;margin:0 0 20px}
section{background:#fff;border:1px solid #d8dee4;border-radius:8px;padding:18px 20px;margin:0 0 18px}
.note{color:#57606a;font-size:13px;margin:0 0 12px}
.cards{display:grid;grid-template-columns:repeat(5,1fr);gap:12px}
.card{border:1px solid #e4e8ec;border-radius:6px;padding:10px 12px;background:#fafbfc}
.card .key{color:#57606a;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}
.card .sub{color:#57606a;font-size:12px}
.compile{color:#57606a;font-size:13px;margin:12px 0 0}
svg{max-width:100%;height:auto;display:block}
svg.chart text{fill:#1f2328;font-size:13px}
svg.chart .dim{fill:#57606a;font-size:11px}
svg.chart .device-id{font-size:14px;font-weight:600;text-anchor:middle}
.host{fill:#f6f8fa;stroke:#d0d7de}
.mem-static{fill:#3b5b92}.mem-act{fill:#7ea6d8}.mem-temp{fill:#c3d5ec}.mem-peak{fill:#7ea6d8}
.mem-over .mem-static{fill:#b42318}.mem-over .mem-act{fill:#e0645a}
.mem-over .mem-temp{fill:#f4b4ad}.mem-over .mem-peak{fill:#e0645a}
svg.chart .mem-over text{fill:#b42318}
.mem-cap{stroke:#1f2328;stroke-width:2;stroke-dasharray:4 3}
.alt-this{fill:#3b5b92}.alt-other{fill:#9aa5b1}
.legend{list-style:none;padding:0;margin:12px 0 0;display:flex;flex-wrap:wrap;gap:6px 18px;
  font-size:13px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;
  vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa;font-weight:600;white-space:nowrap}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td code,td.nowrap{white-space:nowrap}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
details{margin:6px 0}
summary{cursor:pointer;font-weight:600}
details table{margin:6px 0 10px}
.warn{color:#b42318;font-weight:600}
.no-fit{margin:12px 0 0;padding-left:20px;font-size:13px}
)css";

std::string Seconds(std::optional<double> seconds) {
  return seconds ? FormatSeconds(*seconds) : "-";
}

std::string Bytes(std::optional<double> bytes) {
  return bytes ? FormatBytes(static_cast<int64_t>(*bytes)) : "-";
}

std::string Count(std::optional<double> count) {
  return count ? fmt::format("{:.0f}", *count) : "-";
}

std::string Swatch(int stage) {
  return fmt::format(R"(<span class="swatch" style="background:{}"></span>)", StageColor(stage));
}

// "stage j: layers a..b, (1,4) as [2,2] dp", escaped.
std::string StageLabel(const Json& stage, int j) {
  const std::string config = Text(stage, "mesh_config");
  return EscapeMarkup(fmt::format("stage {}: layers {}{}", j, LayerRange(stage),
                                  config.empty() ? "" : ", " + config));
}

// ---- 1. Summary ----

std::string Head(const Json& plan) {
  const std::string title =
      fmt::format("Alpa plan: {} on {}", Text(Field(plan, "model"), "name"), Text(plan, "cluster"));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
      EscapeMarkup(title), kStyle);
}

// "1 host x 8 V100-SXM2-16GB (16.0 GiB each)"; per host type, joined by " + ".
std::string ClusterShapeText(const Json& shape) {
  if (!shape.is_object()) return "";
  auto text = [](const Json& hosts_of, double hosts) {
    return fmt::format("{:.0f} host{} x {} {} ({} each)", hosts, hosts == 1 ? "" : "s",
                       Count(Number(hosts_of, "devices_per_host")), Text(hosts_of, "device"),
                       Bytes(Number(hosts_of, "device_memory_bytes")));
  };
  const Json& types = Items(shape, "host_types");
  if (types.size() < 2) return text(shape, Number(shape, "hosts").value_or(0));
  std::vector<std::string> parts;
  for (const Json& type : types) {
    parts.push_back(text(type, static_cast<double>(Items(type, "hosts").size())));
  }
  return fmt::format("{}", fmt::join(parts, " + "));
}

std::string Title(const Json& plan) {
  const Json& model = Field(plan, "model");
  const std::string shape = ClusterShapeText(Field(plan, "cluster_shape"));
  return fmt::format(
      "<h1>Plan of {}</h1>\n<p class=\"meta\">{}{} &middot; method {} &middot; schedule {} "
      "&middot; model fingerprint <code>{}</code></p>\n",
      EscapeMarkup(Text(model, "name")), EscapeMarkup(Text(plan, "cluster")),
      shape.empty() ? "" : EscapeMarkup(": " + shape), EscapeMarkup(Text(plan, "method")),
      EscapeMarkup(Text(plan, "schedule")), EscapeMarkup(Text(model, "fingerprint")));
}

std::string Card(std::string_view key, std::string_view value, std::string_view sub) {
  return fmt::format(
      "<div class=\"card\"><div class=\"key\">{}</div><div class=\"value\">{}</div>"
      "<div class=\"sub\">{}</div></div>\n",
      key, value, sub);
}

std::string Cards(const Json& plan) {
  const Json& estimate = Field(plan, "estimate");
  const Json& compile = Field(plan, "compile");
  const std::optional<double> bubble = Number(estimate, "bubble_fraction");
  const std::optional<double> tflops = Number(estimate, "tflops");
  std::string cards = "<div class=\"cards\">\n";
  cards +=
      Card("step time", Seconds(Number(estimate, "step_time_s")),
           fmt::format("pipeline {}, Alpa's formula {}", Seconds(Number(estimate, "pipeline_s")),
                       Seconds(Number(estimate, "alpa_formula_s"))));
  cards += Card("pipeline bubble", bubble ? fmt::format("{:.1f}%", 100 * *bubble) : "-",
                "of the devices' time idle");
  cards += Card("TFLOPS per device", tflops ? fmt::format("{:.1f}", *tflops) : "-",
                "model FLOPs / step time");
  cards += Card("micro-batches",
                fmt::format("{} x {}", Count(Number(plan, "num_micro_batches")),
                            Count(Number(plan, "micro_batch_size"))),
                fmt::format("{} stage{}", Items(plan, "stages").size(),
                            Items(plan, "stages").size() == 1 ? "" : "s"));
  cards +=
      Card("compile time", Seconds(Number(compile, "total_s")),
           fmt::format("layer costs {}, stage DP {}", Seconds(Number(compile, "layer_costs_s")),
                       Seconds(Number(compile, "stage_dp_s"))));
  return cards + "</div>\n";
}

// The search's size: "12 distinct layers, 6 mesh configurations, ...", the counts present.
std::string CompileCounts(const Json& compile) {
  static constexpr std::array<std::pair<const char*, std::string_view>, 4> kCounts = {{
      {"distinct_layers", "distinct layers"},
      {"mesh_configs", "mesh configurations"},
      {"intra_op_solves", "intra-op solves"},
      {"candidates_evaluated", "candidate plans evaluated"},
  }};
  std::vector<std::string> parts;
  for (const auto& [key, what] : kCounts) {
    if (const std::optional<double> count = Number(compile, key)) {
      parts.push_back(fmt::format("{:.0f} {}", *count, what));
    }
  }
  if (parts.empty()) return "";
  return fmt::format("<p class=\"compile\">Compile searched {}.</p>\n", fmt::join(parts, ", "));
}

std::string Summary(const Json& plan) {
  return Title(plan) + "<section id=\"summary\">\n" + Cards(plan) +
         CompileCounts(Field(plan, "compile")) + "</section>\n";
}

// ---- 2. Cluster ----

// The devices of each host, in host order (device ids number them host by host).
using ClusterShape = std::vector<int64_t>;

int64_t TotalDevices(const ClusterShape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{0});
}

// From "cluster_shape" (its "host_types" where given); without it, one host holding every device
// a stage names.
ClusterShape ShapeOf(const Json& plan) {
  const Json& shape = Field(plan, "cluster_shape");
  const auto hosts = static_cast<int64_t>(Number(shape, "hosts").value_or(0));
  const auto per_host = static_cast<int64_t>(Number(shape, "devices_per_host").value_or(0));
  if (hosts > 0 && per_host > 0) {
    ClusterShape devices(static_cast<size_t>(hosts), per_host);
    for (const Json& type : Items(shape, "host_types")) {
      const auto count = static_cast<int64_t>(Number(type, "devices_per_host").value_or(0));
      for (int64_t host : Integers(type, "hosts")) {
        if (host >= 0 && host < hosts) devices[static_cast<size_t>(host)] = count;
      }
    }
    return devices;
  }
  int64_t devices = 0;
  for (const Json& stage : Items(plan, "stages")) {
    for (int64_t device : Devices(stage)) devices = std::max(devices, device + 1);
  }
  return {devices};
}

// The stage of every device id (host-major), -1 for devices in no stage.
std::vector<int> StageOfDevice(const Json& plan, int64_t num_devices) {
  std::vector<int> stage_of(static_cast<size_t>(num_devices), -1);
  const Json& stages = Items(plan, "stages");
  for (size_t j = 0; j < stages.size(); ++j) {
    for (int64_t device : Devices(stages[j])) {
      if (device >= 0 && device < num_devices) {
        stage_of[static_cast<size_t>(device)] = static_cast<int>(j);
      }
    }
  }
  return stage_of;
}

std::string DeviceSquare(int64_t device, int stage, double x, double y, double size) {
  const std::string_view color = stage < 0 ? kNoStageColor : StageColor(stage);
  const std::string what = stage < 0 ? "in no stage" : fmt::format("stage {}", stage);
  return fmt::format(
      "<rect class=\"device\" data-device=\"{}\" data-stage=\"{}\" x=\"{}\" y=\"{}\" "
      "width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{}\"><title>device {}: {}</title></rect>"
      "<text class=\"device-id\" x=\"{}\" y=\"{}\">{}</text>\n",
      device, stage, x, y, size, size, color, device, what, x + size / 2, y + size / 2 + 5, device);
}

std::string ClusterSvg(const ClusterShape& shape, const std::vector<int>& stage_of) {
  constexpr double kLabel = 78, kSquare = 44, kGap = 8, kPad = 10, kRowGap = 10;
  const double row = kSquare + 2 * kPad;
  const int64_t widest = *std::max_element(shape.begin(), shape.end());
  const double width = kLabel + static_cast<double>(widest) * (kSquare + kGap) - kGap + kPad;
  const double height = static_cast<double>(shape.size()) * (row + kRowGap) - kRowGap;
  std::string svg = fmt::format(
      "<svg class=\"chart\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n",
      width, height, width, height);
  int64_t device = 0;
  for (size_t h = 0; h < shape.size(); ++h) {
    const double y = static_cast<double>(h) * (row + kRowGap);
    svg += fmt::format(
        "<rect class=\"host\" x=\"0.5\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/>"
        "<text x=\"{}\" y=\"{}\">host {}</text>\n",
        y + 0.5, width - 1, row - 1, kPad, y + row / 2 + 5, h);
    for (int64_t i = 0; i < shape[h]; ++i, ++device) {
      svg += DeviceSquare(device, stage_of[static_cast<size_t>(device)],
                          kLabel + static_cast<double>(i) * (kSquare + kGap), y + kPad, kSquare);
    }
  }
  return svg + "</svg>\n";
}

std::string ClusterLegend(const Json& plan) {
  std::string legend = "<ul class=\"legend\">\n";
  const Json& stages = Items(plan, "stages");
  for (size_t j = 0; j < stages.size(); ++j) {
    const int stage = static_cast<int>(j);
    legend += fmt::format("<li>{}{}</li>\n", Swatch(stage), StageLabel(stages[j], stage));
  }
  return legend + "</ul>\n";
}

std::string Cluster(const Json& plan) {
  const ClusterShape shape = ShapeOf(plan);
  if (TotalDevices(shape) == 0) return "";
  return "<section id=\"cluster\">\n<h2>Cluster</h2>\n" +
         ClusterSvg(shape, StageOfDevice(plan, TotalDevices(shape))) + ClusterLegend(plan) +
         "</section>\n";
}

// ---- 3. Timeline ----

std::string Timeline(std::string_view timeline_svg) {
  std::string section = "<section id=\"timeline\">\n<h2>Timeline</h2>\n";
  if (timeline_svg.empty()) return section + "<p class=\"note\">no timeline</p>\n</section>\n";
  section +=
      "<p class=\"note\">One simulated training step: the forward and backward pass of every "
      "micro-batch on every stage.</p>\n";
  return section + std::string(timeline_svg) + "</section>\n";
}

// ---- 4. Memory per stage ----

struct MemorySegment {
  std::string_view css_class;
  std::string what;
  double bytes = 0;
};

// What a stage's peak per device is made of; without the breakdown, the peak as one segment.
std::vector<MemorySegment> MemorySegments(const Json& stage) {
  const Json& memory = Field(stage, "memory");
  if (!memory.is_object()) {
    return {{"mem-peak", "peak", Number(stage, "peak_memory_bytes").value_or(0)}};
  }
  const double in_flight = Number(memory, "micro_batches_in_flight").value_or(0);
  const double per_micro_batch = Number(memory, "activation_bytes_per_micro_batch").value_or(0);
  return {{"mem-static", "static (weights, gradients, optimizer state)",
           Number(memory, "static_bytes").value_or(0)},
          {"mem-act",
           fmt::format("activations ({:.0f} micro-batches in flight x {})", in_flight,
                       Bytes(per_micro_batch)),
           in_flight * per_micro_batch},
          {"mem-temp", "temporaries", Number(memory, "temporary_bytes").value_or(0)}};
}

double PeakBytes(const Json& stage) {
  if (const std::optional<double> peak = Number(stage, "peak_memory_bytes")) return *peak;
  double sum = 0;
  for (const MemorySegment& segment : MemorySegments(stage)) sum += segment.bytes;
  return sum;
}

bool OverCapacity(const Json& stage) {
  const double capacity = Number(stage, "device_memory_bytes").value_or(0);
  return capacity > 0 && PeakBytes(stage) > capacity;
}

// "12.3 GiB of 16.0 GiB (77%)".
std::string StageMemoryText(const Json& stage) {
  const double peak = PeakBytes(stage);
  const double capacity = Number(stage, "device_memory_bytes").value_or(0);
  if (capacity <= 0) return Bytes(peak);
  return fmt::format("{} of {} ({:.0f}%){}", Bytes(peak), Bytes(capacity), 100 * peak / capacity,
                     peak > capacity ? ", over capacity" : "");
}

// The bytes the memory chart's full width stands for: the largest peak or device memory.
double MemoryScale(const Json& stages) {
  double scale = 0;
  for (const Json& stage : stages) {
    scale = std::max({scale, PeakBytes(stage), Number(stage, "device_memory_bytes").value_or(0)});
  }
  return scale > 0 ? scale : 1;
}

std::string MemoryRow(const Json& stage, int j, double y, double scale) {
  constexpr double kLabel = 70, kPlot = 520, kBar = 22;
  std::string row = fmt::format(
      "<g class=\"mem-bar{}\" data-stage=\"{}\">\n<text x=\"0\" y=\"{}\">stage {}</text>\n",
      OverCapacity(stage) ? " mem-over" : "", j, y + kBar / 2 + 5, j);
  double x = kLabel;
  for (const MemorySegment& segment : MemorySegments(stage)) {
    const double width = segment.bytes / scale * kPlot;
    row += fmt::format(
        "<rect class=\"{}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\">"
        "<title>{}: {}</title></rect>\n",
        segment.css_class, x, y, width, kBar, EscapeMarkup(segment.what), Bytes(segment.bytes));
    x += width;
  }
  if (const double capacity = Number(stage, "device_memory_bytes").value_or(0); capacity > 0) {
    const double cap_x = kLabel + capacity / scale * kPlot;
    row += fmt::format(
        "<line class=\"mem-cap\" x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\">"
        "<title>device memory {3}</title></line>\n",
        cap_x, y - 4, y + kBar + 4, Bytes(capacity));
  }
  return row + fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n</g>\n", kLabel + kPlot + 12,
                           y + kBar / 2 + 5, StageMemoryText(stage));
}

// Swatches are tiny SVGs with the bars' classes, so the style sheet alone holds the colours.
std::string MemoryLegend() {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kParts = {{
      {"mem-static", "static: weights, gradients, optimizer state"},
      {"mem-act", "activations: micro-batches in flight x bytes per micro-batch"},
      {"mem-temp", "temporaries"},
  }};
  std::string legend = "<ul class=\"legend\">\n";
  for (const auto& [css_class, what] : kParts) {
    legend += fmt::format(
        "<li><svg class=\"swatch\" width=\"12\" height=\"12\"><rect class=\"{}\" width=\"12\" "
        "height=\"12\"/></svg>{}</li>\n",
        css_class, what);
  }
  return legend +
         "<li>dashed line: device memory; a stage over it in <span class=\"warn\">red</span></li>\n"
         "</ul>\n";
}

std::string Memory(const Json& plan) {
  constexpr double kRow = 36, kWidth = 940;
  const Json& stages = Items(plan, "stages");
  if (stages.empty()) return "";
  const double scale = MemoryScale(stages);
  const double height = kRow * static_cast<double>(stages.size());
  std::string svg = fmt::format(
      "<svg class=\"chart\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n",
      kWidth, height, kWidth, height);
  for (size_t j = 0; j < stages.size(); ++j) {
    svg += MemoryRow(stages[j], static_cast<int>(j), kRow * static_cast<double>(j) + 7, scale);
  }
  return "<section id=\"memory\">\n<h2>Memory per stage</h2>\n"
         "<p class=\"note\">Peak bytes per device of each stage.</p>\n" +
         svg + "</svg>\n" + MemoryLegend() + "</section>\n";
}

// ---- 5. Stages table ----

// "all-reduce 12, all-gather 4".
std::string Collectives(const Json& stage) {
  const Json& comm = Field(stage, "comm");
  if (!comm.is_object() || comm.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [kind, count] : comm.items()) {
    parts.push_back(fmt::format("{} {}", EscapeMarkup(kind),
                                count.is_number() ? Count(count.get<double>()) : "-"));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string StageRow(const Json& stage, int j) {
  return fmt::format(
      "<tr><td>{}{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td>"
      "<td>{}</td></tr>\n",
      Swatch(j), j, LayerRange(stage), DeviceRange(Devices(stage)),
      EscapeMarkup(Text(stage, "mesh_config")), Seconds(Number(stage, "forward_time_s")),
      Seconds(Number(stage, "backward_time_s")), Seconds(Number(stage, "update_time_s")),
      OverCapacity(stage) ? "nowrap warn" : "nowrap", StageMemoryText(stage), Collectives(stage));
}

std::string StagesTable(const Json& plan) {
  const Json& stages = Items(plan, "stages");
  if (stages.empty()) return "";
  std::string table =
      "<section id=\"stages\">\n<h2>Stages</h2>\n"
      "<p class=\"note\">Forward and backward per micro-batch, the update once per step; memory "
      "is the peak per device.</p>\n<table>\n<tr><th>stage</th><th>layers</th><th>devices</th>"
      "<th>mesh config</th><th class=\"num\">forward</th><th class=\"num\">backward</th>"
      "<th class=\"num\">update</th>"
      "<th>peak memory</th><th>collectives</th></tr>\n";
  for (size_t j = 0; j < stages.size(); ++j) table += StageRow(stages[j], static_cast<int>(j));
  return table + "</table>\n</section>\n";
}

// ---- 6. Parameter shardings ----

std::string ParameterDetails(const Json& stage, int j) {
  const Json& parameters = Items(stage, "parameters");
  std::string details = fmt::format(
      "<details><summary>{}{} ({} parameter{})</summary>\n<table>\n"
      "<tr><th>parameter</th><th>sharding</th></tr>\n",
      Swatch(j), StageLabel(stage, j), parameters.size(), parameters.size() == 1 ? "" : "s");
  for (const Json& parameter : parameters) {
    details += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n",
                           EscapeMarkup(Text(parameter, "name")),
                           EscapeMarkup(Text(parameter, "sharding")));
  }
  return details + "</table>\n</details>\n";
}

std::string Parameters(const Json& plan) {
  const Json& stages = Items(plan, "stages");
  std::string details;
  for (size_t j = 0; j < stages.size(); ++j) {
    if (!Items(stages[j], "parameters").empty()) {
      details += ParameterDetails(stages[j], static_cast<int>(j));
    }
  }
  if (details.empty()) return "";
  return "<section id=\"parameters\">\n<h2>Parameter shardings</h2>\n"
         "<p class=\"note\">Each weight's XLA sharding on its stage's logical mesh.</p>\n" +
         details + "</section>\n";
}

// ---- 7. Alternatives ----

struct StepBar {
  std::string name;    // escaped
  std::string detail;  // escaped
  double seconds = 0;
  bool this_plan = false;
};

// "dp 8, op 1, pp 1"; empty when the alternative names no grid point (the planner writes 0s
// when no point of the grid fits).
std::string GridPoint(const Json& alternative) {
  const std::optional<double> dp = Number(alternative, "dp"), op = Number(alternative, "op"),
                              pp = Number(alternative, "pp");
  if (!dp || !op || !pp || *dp < 1 || *op < 1 || *pp < 1) return "";
  return fmt::format("dp {:.0f}, op {:.0f}, pp {:.0f}", *dp, *op, *pp);
}

std::string StepBarRow(const StepBar& bar, double y, double scale, std::optional<double> base) {
  constexpr double kLabel = 230, kPlot = 470, kBar = 22;
  std::string value = FormatSeconds(bar.seconds);
  if (!bar.this_plan && base && *base > 0) {
    value += fmt::format(", {:.2f}x this plan", bar.seconds / *base);
  }
  return fmt::format(
      "<g class=\"alt-bar\"><text x=\"0\" y=\"{:.1f}\">{}</text>"
      "<text class=\"dim\" x=\"0\" y=\"{:.1f}\">{}</text>"
      "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" rx=\"2\"/>"
      "<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text></g>\n",
      y + 9, bar.name, y + 23, bar.detail, bar.this_plan ? "alt-this" : "alt-other", kLabel, y,
      bar.seconds / scale * kPlot, kBar, kLabel + bar.seconds / scale * kPlot + 8, y + kBar / 2 + 5,
      value);
}

std::string StepBarChart(const std::vector<StepBar>& bars, std::optional<double> base) {
  constexpr double kRow = 40, kWidth = 940;
  double scale = 0;
  for (const StepBar& bar : bars) scale = std::max(scale, bar.seconds);
  if (scale <= 0) scale = 1;
  const double height = kRow * static_cast<double>(bars.size());
  std::string svg = fmt::format(
      "<svg class=\"chart\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n",
      kWidth, height, kWidth, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    svg += StepBarRow(bars[i], kRow * static_cast<double>(i) + 6, scale, base);
  }
  return svg + "</svg>\n";
}

std::string NoFitItem(const Json& alternative) {
  const std::string error = Text(alternative, "error");
  const std::string point = GridPoint(alternative);
  return fmt::format("<li><strong>{}</strong>{}: {}</li>\n",
                     EscapeMarkup(Text(alternative, "name")),
                     point.empty() ? "" : " (" + point + ")",
                     error.empty() ? "no estimate" : EscapeMarkup("does not fit: " + error));
}

std::string Alternatives(const Json& plan) {
  const Json& alternatives = Items(plan, "alternatives");
  if (alternatives.empty()) return "";
  const std::optional<double> base = Number(Field(plan, "estimate"), "step_time_s");
  std::vector<StepBar> bars;
  if (base) {
    bars.push_back({"this plan",
                    EscapeMarkup(fmt::format("{}, {} stages", Text(plan, "method"),
                                             Items(plan, "stages").size())),
                    *base, true});
  }
  std::string no_fit;
  for (const Json& alternative : alternatives) {
    if (const std::optional<double> seconds = Number(alternative, "step_time_s")) {
      bars.push_back({EscapeMarkup(Text(alternative, "name")), GridPoint(alternative), *seconds});
    } else {
      no_fit += NoFitItem(alternative);
    }
  }
  std::string section =
      "<section id=\"alternatives\">\n<h2>Alternatives</h2>\n"
      "<p class=\"note\">Step time of this plan and of the plans it was compared with.</p>\n";
  if (!bars.empty()) section += StepBarChart(bars, base);
  if (!no_fit.empty()) section += "<ul class=\"no-fit\">\n" + no_fit + "</ul>\n";
  return section + "</section>\n";
}

}  // namespace

std::string_view StageColor(int stage) {
  return kStagePalette[static_cast<size_t>(stage) % kStagePalette.size()];
}

std::string RenderPlanReport(const nlohmann::ordered_json& plan, std::string_view timeline_svg) {
  return Head(plan) + Summary(plan) + Cluster(plan) + Timeline(timeline_svg) + Memory(plan) +
         StagesTable(plan) + Parameters(plan) + Alternatives(plan) + "</main>\n</body>\n</html>\n";
}

}  // namespace alpa::plan
