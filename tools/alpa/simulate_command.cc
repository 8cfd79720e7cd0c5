#include "tools/alpa/simulate_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/alpa_formula.h"
#include "pipeline/schedule.h"
#include "pipeline/spec_json.h"
#include "pipeline/trace_export.h"
#include "support/file.h"
#include "support/json_text.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

using pipeline::PipelineSpec;
using pipeline::ScheduleKind;
using pipeline::SimulationResult;
using pipeline::StageSpec;

std::string Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(Trim(text.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// A whole decimal number ("1", "2.5", "1e-3", "-1"); nullopt when anything else is in it.
std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

struct Unit {
  std::string_view suffix;
  double scale;
};
constexpr Unit kTimeUnits[] = {{"ms", 1e-3}, {"us", 1e-6}, {"s", 1.0}};
constexpr Unit kByteUnits[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
    {"TB", 1e12},    {"B", 1.0}};

// A number with the first of `units` it ends with, scaled by that unit; or a plain number.
std::optional<double> ParseWithUnit(const std::string& text, std::span<const Unit> units) {
  for (const Unit& unit : units) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      std::optional<double> value =
          ParseNumber(Trim(std::string_view(text).substr(0, text.size() - unit.suffix.size())));
      if (!value.has_value()) return std::nullopt;
      return *value * unit.scale;
    }
  }
  return ParseNumber(text);
}

// "2", "2s", "1.5ms", "300us": seconds.
std::optional<double> ParseSeconds(const std::string& text) {
  return ParseWithUnit(text, kTimeUnits);
}

// "1073741824", "512MiB", "1.5GiB", "2GB": bytes, a whole number. A plain number must be whole;
// one with a unit is rounded to whole bytes.
std::optional<double> ParseBytes(const std::string& text) {
  if (std::optional<double> plain = ParseNumber(text); plain.has_value()) {
    if (*plain != std::floor(*plain)) return std::nullopt;
    return plain;
  }
  std::optional<double> value = ParseWithUnit(text, kByteUnits);
  if (!value.has_value()) return std::nullopt;
  return std::round(*value);
}

Result<double> TimeValue(const std::string& text, const std::string& what) {
  std::optional<double> seconds = ParseSeconds(text);
  if (!seconds.has_value()) {
    return InvalidArgument("{}: '{}' is not a time (seconds, e.g. 2, 2s, 1.5ms or 300us)", what,
                           text);
  }
  if (*seconds < 0) return InvalidArgument("{}: {} is negative; times must be >= 0", what, text);
  return *seconds;
}

// One value for every stage, or one per stage.
Result<std::vector<int64_t>> BytesList(const std::string& text, size_t num_stages,
                                       const std::string& flag) {
  const std::vector<std::string> parts = Split(text, ',');
  if (parts.size() != 1 && parts.size() != num_stages) {
    return InvalidArgument("{}: {} values for {} stages; give one for every stage or one per stage",
                           flag, parts.size(), num_stages);
  }
  std::vector<int64_t> bytes;
  for (const std::string& part : parts) {
    std::optional<double> value = ParseBytes(part);
    if (!value.has_value()) {
      return InvalidArgument("{}: '{}' is not a byte count (e.g. 1073741824, 512MiB or 2GB)", flag,
                             part);
    }
    if (*value < 0) return InvalidArgument("{}: {} is negative; bytes must be >= 0", flag, part);
    if (*value >= 9.2e18) return InvalidArgument("{}: {} is too large", flag, part);
    bytes.push_back(static_cast<int64_t>(*value));
  }
  bytes.resize(num_stages, bytes.front());
  return bytes;
}

// --- The report --------------------------------------------------------------------------------

struct Summary {
  double formula_s = 0;
  std::vector<std::vector<int>> device_stages;  // virtual stages of each device
  int64_t peak_bytes = 0;
  int peak_device = 0;
  int peak_in_flight = 0;
};

double MeanTime(const std::vector<double>& per_micro_batch, double fallback) {
  if (per_micro_batch.empty()) return fallback;
  double sum = 0;
  for (double t : per_micro_batch) sum += t;
  return sum / static_cast<double>(per_micro_batch.size());
}

Summary Summarize(const PipelineSpec& spec, const SimulationResult& result) {
  Summary summary;
  const int num_devices = result.num_devices;
  summary.device_stages.resize(num_devices);
  // Alpa's formula over pipeline stages: with chunks a device's stage time is the sum of its
  // chunks (the work it does for one micro-batch); per-micro-batch times enter as their mean.
  std::vector<double> stage_times(num_devices, 0.0);
  for (size_t j = 0; j < spec.stages.size(); ++j) {
    const StageSpec& stage = spec.stages[j];
    const int device = static_cast<int>(j) % num_devices;
    summary.device_stages[device].push_back(static_cast<int>(j));
    stage_times[device] += MeanTime(stage.forward_per_micro_batch_s, stage.forward_s) +
                           MeanTime(stage.backward_per_micro_batch_s, stage.backward_s);
  }
  summary.formula_s = pipeline::AlpaPipelineLatency(stage_times, spec.num_micro_batches);
  for (int d = 0; d < num_devices; ++d) {
    const pipeline::DeviceStats& stats = result.devices[d];
    if (stats.peak_bytes > summary.peak_bytes) {
      summary.peak_bytes = stats.peak_bytes;
      summary.peak_device = d;
    }
    summary.peak_in_flight = std::max(summary.peak_in_flight, stats.peak_in_flight);
  }
  return summary;
}

// (formula - simulation) / simulation; 0 for an empty step.
double FormulaError(const Summary& summary, const SimulationResult& result) {
  if (result.step_time_s <= 0) return 0;
  return (summary.formula_s - result.step_time_s) / result.step_time_s;
}

double BusyFraction(const pipeline::DeviceStats& stats, const SimulationResult& result) {
  return result.step_time_s > 0 ? stats.busy_s / result.step_time_s : 0;
}

std::string TextReport(const PipelineSpec& spec, const SimulationResult& result,
                       const SimulateOptions& options) {
  const Summary summary = Summarize(spec, result);
  std::string out;
  out += fmt::format(
      "pipeline       {} micro-batch{} through {} stage{} on {} device{}, {}{}\n",
      result.num_micro_batches, result.num_micro_batches == 1 ? "" : "es", spec.stages.size(),
      spec.stages.size() == 1 ? "" : "s", result.num_devices, result.num_devices == 1 ? "" : "s",
      pipeline::ScheduleKindName(result.schedule),
      result.num_chunks > 1 ? fmt::format(" ({} chunks per device)", result.num_chunks) : "");
  out += fmt::format("step time      {}\n", FormatSeconds(result.step_time_s));
  out += fmt::format("bubble         {:.1f}% of device time idle\n", 100 * result.bubble_fraction);
  out += fmt::format("critical path  {} (longest dependency chain: no schedule is faster)\n",
                     FormatSeconds(result.critical_path_s));
  const double error = FormulaError(summary, result);
  const double diff = summary.formula_s - result.step_time_s;
  const std::string versus =
      std::fabs(diff) <= 1e-9 * std::max(1.0, result.step_time_s)
          ? "equal to the simulation"
          : fmt::format("{}{} ({:+.1f}%) vs the simulation", diff > 0 ? "+" : "-",
                        FormatSeconds(std::fabs(diff)), 100 * error);
  out += fmt::format("alpa formula   {}: sum(t_i) + (B-1)*max(t_i), t_i = f_i + b_i; {}\n",
                     FormatSeconds(summary.formula_s), versus);
  out += fmt::format("peak memory    {} (device {}); at most {} micro-batch{} in flight\n",
                     FormatBytes(summary.peak_bytes), summary.peak_device, summary.peak_in_flight,
                     summary.peak_in_flight == 1 ? "" : "es");
  if (!options.trace.empty()) {
    out += fmt::format("trace          {} (open in chrome://tracing or ui.perfetto.dev)\n",
                       options.trace);
  }
  if (!options.svg.empty()) out += fmt::format("svg            {}\n", options.svg);

  Table table(
      {"device", "stages", "busy", "busy %", "static", "peak memory", "peak in flight"},
      {Table::Align::kRight, Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight,
       Table::Align::kRight, Table::Align::kRight, Table::Align::kRight});
  for (int d = 0; d < result.num_devices; ++d) {
    const pipeline::DeviceStats& stats = result.devices[d];
    table.AddRow({fmt::format("{}", d), fmt::format("{}", fmt::join(summary.device_stages[d], ",")),
                  FormatSeconds(stats.busy_s),
                  fmt::format("{:.1f}%", 100 * BusyFraction(stats, result)),
                  FormatBytes(stats.static_bytes), FormatBytes(stats.peak_bytes),
                  fmt::format("{}", stats.peak_in_flight)});
  }
  out += "\n" + table.Render();
  return out;
}

std::string JsonReport(const PipelineSpec& spec, const SimulationResult& result,
                       const SimulateOptions& options) {
  const Summary summary = Summarize(spec, result);
  Json json = Json::object();
  json["schedule"] = std::string(pipeline::ScheduleKindName(result.schedule));
  json["num_stages"] = spec.stages.size();
  json["num_devices"] = result.num_devices;
  json["num_chunks"] = result.num_chunks;
  json["num_micro_batches"] = result.num_micro_batches;
  json["step_time_s"] = result.step_time_s;
  json["bubble_fraction"] = result.bubble_fraction;
  json["critical_path_s"] = result.critical_path_s;
  json["alpa_formula_s"] = summary.formula_s;
  json["alpa_formula_error"] = FormulaError(summary, result);
  json["peak_bytes"] = summary.peak_bytes;
  json["peak_in_flight"] = summary.peak_in_flight;
  Json devices = Json::array();
  for (int d = 0; d < result.num_devices; ++d) {
    const pipeline::DeviceStats& stats = result.devices[d];
    devices.push_back(Json{{"device", d},
                           {"stages", summary.device_stages[d]},
                           {"busy_s", stats.busy_s},
                           {"busy_fraction", BusyFraction(stats, result)},
                           {"static_bytes", stats.static_bytes},
                           {"peak_bytes", stats.peak_bytes},
                           {"peak_in_flight", stats.peak_in_flight}});
  }
  json["devices"] = std::move(devices);
  if (!options.trace.empty()) json["trace_file"] = options.trace;
  if (!options.svg.empty()) json["svg_file"] = options.svg;
  return DumpJson(json) + "\n";
}

}  // namespace

Result<PipelineSpec> PipelineSpecFromFlags(const SimulateOptions& options) {
  PipelineSpec spec;
  const std::vector<std::string> stages = Split(options.stages, ',');
  for (size_t i = 0; i < stages.size(); ++i) {
    const std::vector<std::string> times = Split(stages[i], ':');
    if (times.size() != 2 || times[0].empty() || times[1].empty()) {
      return InvalidArgument(
          "--stages: stage {} is '{}', not FORWARD:BACKWARD (seconds per micro-batch, e.g. "
          "--stages 1:2,1:2 or 1.5ms:3ms)",
          i, stages[i]);
    }
    StageSpec stage;
    ALPA_ASSIGN_OR_RETURN(stage.forward_s,
                          TimeValue(times[0], fmt::format("--stages: stage {} forward", i)));
    ALPA_ASSIGN_OR_RETURN(stage.backward_s,
                          TimeValue(times[1], fmt::format("--stages: stage {} backward", i)));
    spec.stages.push_back(stage);
  }
  if (options.micro_batches < 1) {
    return InvalidArgument("--micro-batches {}: must be at least 1", options.micro_batches);
  }
  spec.num_micro_batches = options.micro_batches;
  Result<ScheduleKind> kind = pipeline::ParseScheduleKind(options.schedule);
  if (!kind.ok()) return kind.status().WithContext("--schedule");
  spec.schedule = *kind;
  spec.num_chunks = options.chunks;
  if (!options.transfer.empty()) {
    ALPA_ASSIGN_OR_RETURN(double t, TimeValue(options.transfer, "--transfer"));
    spec.forward_transfer_s.assign(spec.stages.size() - 1, t);
    spec.backward_transfer_s.assign(spec.stages.size() - 1, t);
  }
  if (!options.static_bytes.empty()) {
    ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> bytes,
                          BytesList(options.static_bytes, spec.stages.size(), "--static-bytes"));
    for (size_t i = 0; i < bytes.size(); ++i) spec.stages[i].static_bytes = bytes[i];
  }
  if (!options.activation_bytes.empty()) {
    ALPA_ASSIGN_OR_RETURN(
        std::vector<int64_t> bytes,
        BytesList(options.activation_bytes, spec.stages.size(), "--activation-bytes"));
    for (size_t i = 0; i < bytes.size(); ++i) spec.stages[i].activation_bytes = bytes[i];
  }
  ALPA_RETURN_IF_ERROR(pipeline::CheckPipelineLayout(spec, "--chunks", "--micro-batches"));
  return spec;
}

CLI::App* AddSimulateCommand(CLI::App& app, SimulateOptions& options) {
  CLI::App* command = app.add_subcommand(
      "simulate",
      "Simulate one training step of a pipeline: step time, bubbles, memory; Chrome trace and SVG "
      "timeline");
  CLI::Option* stages = command->add_option(
      "--stages", options.stages,
      "F:B[,F:B...]: forward and backward seconds per micro-batch of each stage, in model order "
      "(plain seconds or with s, ms, us: 1:2, 1.5ms:3ms)");
  CLI::Option* micro_batches =
      command->add_option("--micro-batches", options.micro_batches, "Micro-batches per step (B)")
          ->capture_default_str();
  CLI::Option* schedule = command
                              ->add_option("--schedule", options.schedule,
                                           "Pipeline schedule: gpipe, 1f1b or interleaved-1f1b")
                              ->capture_default_str();
  CLI::Option* chunks =
      command
          ->add_option("--chunks", options.chunks,
                       "Model chunks per device (interleaved-1f1b); --stages then lists "
                       "devices x chunks virtual stages, stage j on device j % devices")
          ->capture_default_str();
  CLI::Option* transfer = command->add_option(
      "--transfer", options.transfer,
      "Seconds to send activations forward and gradients backward across every stage boundary "
      "(overlaps with compute)");
  CLI::Option* activation = command->add_option(
      "--activation-bytes", options.activation_bytes,
      "Bytes saved per micro-batch in flight: one value for every stage or one per stage "
      "(e.g. 512MiB or 1GiB,1GiB)");
  CLI::Option* static_bytes = command->add_option(
      "--static-bytes", options.static_bytes,
      "Bytes held all step (weights, gradients, optimizer state): one value or one per stage");
  CLI::Option* spec =
      command->add_option("--spec", options.spec,
                          "A pipeline file FILE.json instead of the flags above (format in "
                          "tools/alpa/simulate_command.h; example in examples/pipelines/)");
  for (CLI::Option* flag :
       {stages, micro_batches, schedule, chunks, transfer, activation, static_bytes}) {
    spec->excludes(flag);
  }
  command->add_flag("--json", options.json, "Print the summary as JSON");
  command->add_option("--trace", options.trace,
                      "Write the timeline as a Chrome trace to FILE (chrome://tracing, Perfetto)");
  command->add_option("--svg", options.svg, "Write the timeline as an SVG Gantt chart to FILE");
  command->footer(
      "Examples:\n"
      "  alpa simulate --stages 1:2,1:2 --micro-batches 4 --schedule gpipe\n"
      "  alpa simulate --spec examples/pipelines/gpt-4-stages.json --svg step.svg\n"
      "Alpa's formula is the closed form its stage-construction DP uses; the simulation adds "
      "the schedule's task order and transfers (src/pipeline/simulator.h). Exit codes: 0 "
      "success, 2 bad input.");
  return command;
}

int RunSimulate(const SimulateOptions& options) {
  Result<PipelineSpec> spec = [&]() -> Result<PipelineSpec> {
    if (!options.spec.empty()) {
      ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(options.spec));
      return pipeline::ParsePipelineJson(text, options.spec);
    }
    if (options.stages.empty()) {
      return InvalidArgument(
          "simulate: give the pipeline as --stages F:B,... (with --micro-batches) or --spec "
          "FILE.json; see alpa simulate --help");
    }
    return PipelineSpecFromFlags(options);
  }();
  if (!spec.ok()) return ReportError(spec.status());
  Result<SimulationResult> result = pipeline::SimulatePipeline(*spec);
  if (!result.ok()) return ReportError(result.status());
  // Files first: an unwritable path is bad input and leaves stdout empty.
  if (!options.trace.empty()) {
    Status status = WriteTextFile(options.trace, pipeline::ToChromeTrace(*result), "--trace");
    if (!status.ok()) return ReportError(status);
  }
  if (!options.svg.empty()) {
    Status status = WriteTextFile(options.svg, pipeline::ToSvgGantt(*result), "--svg");
    if (!status.ok()) return ReportError(status);
  }
  fmt::print("{}", options.json ? JsonReport(*spec, *result, options)
                                : TextReport(*spec, *result, options));
  return kExitOk;
}

}  // namespace alpa::tools
