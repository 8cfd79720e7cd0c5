#include "tools/alpa/pipeshard_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>

#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "pipeline/trace_export.h"
#include "plan/layer_costs.h"
#include "plan/manual_stages.h"
#include "plan/pipeshard_planner.h"
#include "plan/uniform_plans.h"
#include "support/file.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/plan_report.h"
#include "tools/alpa/profile_command.h"

namespace alpa::tools {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

cluster::SubmeshSpace SubmeshSpaceOf(const std::string& name) {
  if (name == "all") return cluster::SubmeshSpace::kAll;
  if (name == "small-power-of-two") return cluster::SubmeshSpace::kSmallPowerOfTwo;
  return cluster::SubmeshSpace::kPowerOfTwo;
}

std::vector<pipeline::ScheduleKind> SchedulesOf(const std::string& name) {
  using pipeline::ScheduleKind;
  if (name == "auto") {
    return {ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kInterleaved1F1B};
  }
  return {*pipeline::ParseScheduleKind(name)};  // the flag's values are checked
}

struct PipeshardReport {
  std::string method;
  std::vector<plan::UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  // What a user would try instead: pure data parallel and the best uniform grid point.
  std::vector<std::pair<std::string, plan::UniformGridPoint>> alternatives;
  std::vector<std::string> parameter_names;  // of the model's loss, by parameter number
  std::string model_name;
  std::string fingerprint;
  std::string cluster;
  int64_t micro_batch_size = 0;
  double step_flops = 0;  // of the whole batch (all micro-batches), every layer's step
  double devices = 1;
  double total_s = 0;
  double layer_costs_s = 0;
  double stage_dp_s = 0;
  double alternatives_s = 0;
  std::vector<std::string> warnings;  // printed and in the JSON
};

// A micro-batch count the user fixed below the plan's pipeline depth leaves stages idle most of
// the step, and Alpa's formula sum t + (B - 1) max t, which assumes a steady state where every
// stage is busy, is no guide there: the step time is the simulator's.
std::optional<std::string> FewMicroBatchesWarning(const plan::PipeshardPlan& plan) {
  const int64_t depth = static_cast<int64_t>(plan.stages.size()) / plan.num_chunks;
  if (plan.num_micro_batches >= depth) return std::nullopt;
  return fmt::format(
      "{} micro-batch{} for {} pipeline stages: a pipeline this deep never reaches the steady "
      "state Alpa's formula sum t + (B - 1) max t assumes, and its devices idle {:.0f}% of the "
      "time; the step time is the simulator's. Use at least {} micro-batches, or leave out "
      "--micro-batches to search the count",
      plan.num_micro_batches, plan.num_micro_batches == 1 ? "" : "es", depth,
      100 * plan.bubble_fraction, depth);
}

nlohmann::ordered_json CommJson(const std::map<cost::CollectiveKind, int64_t>& collectives) {
  nlohmann::ordered_json comm = nlohmann::ordered_json::object();
  for (const auto& [kind, count] : collectives) comm[cost::CollectiveKindName(kind)] = count;
  return comm;
}

nlohmann::ordered_json GridPointJson(const plan::UniformGridPoint& point) {
  return {
      {"dp", point.dp},
      {"op", point.op},
      {"pp", point.pp},
      {"step_time_s", point.plan.ok() ? nlohmann::ordered_json(point.plan->step_time_s) : nullptr},
      {"error", point.plan.ok() ? "" : point.plan.status().message()}};
}

nlohmann::ordered_json GridJson(const std::vector<plan::UniformGridPoint>& grid) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const plan::UniformGridPoint& point : grid) points.push_back(GridPointJson(point));
  return points;
}

nlohmann::ordered_json AlternativesJson(const PipeshardReport& report) {
  nlohmann::ordered_json alternatives = nlohmann::ordered_json::array();
  for (const auto& [name, point] : report.alternatives) {
    nlohmann::ordered_json alternative = {{"name", name}};
    alternative.update(GridPointJson(point));
    alternatives.push_back(std::move(alternative));
  }
  return alternatives;
}

// Each weight of the stage's layers (once, in layer order) with its XLA sharding.
nlohmann::ordered_json StageParametersJson(const PipeshardReport& report,
                                           const plan::LayerCostTable& table,
                                           const plan::StageChoice& choice) {
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  std::set<int64_t> seen;
  for (int64_t k = choice.first_layer; k <= choice.last_layer; ++k) {
    const std::vector<int64_t>& weights = table.weights[static_cast<size_t>(k)];
    const std::vector<std::string>& shardings = table.at(k, choice.config).weight_shardings;
    for (size_t w = 0; w < weights.size() && w < shardings.size(); ++w) {
      if (!seen.insert(weights[w]).second) continue;
      parameters.push_back({{"name", report.parameter_names[static_cast<size_t>(weights[w])]},
                            {"sharding", shardings[w]}});
    }
  }
  return parameters;
}

// The first host's figures, and every host type's ("host_types", hosts by index: several on a
// heterogeneous cluster).
nlohmann::ordered_json ClusterShapeJson(const cluster::ClusterSpec& cluster) {
  const cluster::HostSpec& host = cluster.hosts.front();
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const cluster::HostType& type : cluster::HostTypes(cluster)) {
    types.push_back({{"hosts", type.hosts},
                     {"devices_per_host", type.host.devices},
                     {"device", type.host.device.name},
                     {"device_memory_bytes", type.host.device.memory_bytes}});
  }
  return {{"hosts", cluster.hosts.size()},
          {"devices_per_host", host.devices},
          {"device", host.device.name},
          {"device_memory_bytes", host.device.memory_bytes},
          {"host_types", std::move(types)}};
}

nlohmann::ordered_json PlanJson(const PipeshardReport& report, const plan::LayerCostTable& table,
                                const cluster::ClusterSpec& cluster,
                                const plan::PipeshardPlan& plan) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const plan::PlannedStage& stage : plan.stages) {
    const plan::MeshConfig& config = table.configs[static_cast<size_t>(stage.choice.config)];
    stages.push_back(
        {{"layers", {stage.choice.first_layer, stage.choice.last_layer}},
         {"devices", stage.devices},
         {"device_type", stage.device_type},
         {"submesh", config.submesh.shape},
         {"logical_mesh", config.logical_shape},
         {"mesh_config", plan::MeshConfigName(config)},
         {"force_batch_dim_to_mesh_dim", config.force_batch ? nlohmann::ordered_json(0) : nullptr},
         {"forward_time_s", stage.forward_s},
         {"backward_time_s", stage.backward_s},
         {"update_time_s", stage.update_s},
         {"peak_memory_bytes", stage.peak_memory_bytes},
         {"device_memory_bytes", stage.memory_bytes},
         {"memory",
          {{"static_bytes", stage.static_bytes},
           {"activation_bytes_per_micro_batch", stage.activation_bytes},
           {"micro_batches_in_flight", stage.micro_batches_in_flight},
           {"temporary_bytes", stage.temporary_bytes}}},
         {"comm", CommJson(stage.collectives)},
         {"parameters", StageParametersJson(report, table, stage.choice)}});
  }
  return {{"format", "alpa-plan"},
          {"version", 2},
          {"model", {{"name", report.model_name}, {"fingerprint", report.fingerprint}}},
          {"cluster", report.cluster},
          {"cluster_shape", ClusterShapeJson(cluster)},
          {"method", report.method},
          {"schedule", pipeline::ScheduleKindName(plan.schedule)},
          {"num_chunks", plan.num_chunks},
          {"num_micro_batches", plan.num_micro_batches},
          {"micro_batch_size", report.micro_batch_size},
          {"num_layers", table.num_layers},
          {"estimate",
           {{"step_time_s", plan.step_time_s},
            {"pipeline_s", plan.pipeline_s},
            {"alpa_formula_s", plan.alpa_formula_s},
            {"bubble_fraction", plan.bubble_fraction},
            {"tflops", report.step_flops / plan.step_time_s / report.devices / 1e12}}},
          {"stages", stages},
          {"warnings", report.warnings},
          {"alternatives", AlternativesJson(report)},
          {"grid", GridJson(report.grid)},
          {"compile",
           {{"total_s", report.total_s},
            {"layer_costs_s", report.layer_costs_s},
            {"stage_dp_s", report.stage_dp_s},
            {"alternatives_s", report.alternatives_s},
            {"distinct_layers", table.distinct_layers},
            {"mesh_configs", table.configs.size()},
            {"intra_op_solves", table.intra_op_solves},
            {"candidates_evaluated", plan.candidates_evaluated}}}};
}

// The plans a user would try instead, one line each:
//   "  best uniform grid point (dp 8, op 1, pp 2): 59.3 s, 1.00x this plan", or why it fails.
std::string AlternativesText(const PipeshardReport& report, double step_time_s) {
  std::string text = "\nalternatives on the same costs:\n";
  for (const auto& [name, point] : report.alternatives) {
    const std::string shape =
        point.dp > 0 ? fmt::format(" (dp {}, op {}, pp {})", point.dp, point.op, point.pp) : "";
    text += point.plan.ok()
                ? fmt::format("  {}{}: {}, {:.2f}x this plan\n", name, shape,
                              FormatSeconds(point.plan->step_time_s),
                              point.plan->step_time_s / step_time_s)
                : fmt::format("  {}{}: {}\n", name, shape, point.plan.status().message());
  }
  return text;
}

std::string PlanText(const PipeshardReport& report, const plan::LayerCostTable& table,
                     const plan::PipeshardPlan& plan) {
  const std::string chunks =
      plan.num_chunks > 1
          ? fmt::format(" ({} chunks per device: stage j runs on stage j % {}'s devices)",
                        plan.num_chunks, plan.stages.size() / plan.num_chunks)
          : "";
  std::string text =
      fmt::format("{} plan of {} on {}: {} stage(s), {}{} with {} micro-batches of {}\n",
                  report.method, report.model_name, report.cluster, plan.stages.size(),
                  pipeline::ScheduleKindName(plan.schedule), chunks, plan.num_micro_batches,
                  report.micro_batch_size);
  text += fmt::format(
      "  step time     {} (pipeline {}, bubble {:.1f}%; Alpa's formula gives {} for the "
      "pipeline)\n",
      FormatSeconds(plan.step_time_s), FormatSeconds(plan.pipeline_s), 100 * plan.bubble_fraction,
      FormatSeconds(plan.alpa_formula_s));
  for (const std::string& warning : report.warnings) text += "  warning: " + warning + "\n";
  // What the planning step after the layer costs evaluated: the DP's candidates, the uniform
  // grid's points, or the one plan given.
  const std::string searched =
      report.method == "pipeshard" && plan.candidates_evaluated > 0
          ? fmt::format("stage DP and simulation {:.2f} s, {} candidates", report.stage_dp_s,
                        plan.candidates_evaluated)
      : !report.grid.empty()
          ? fmt::format("{} grid points {:.2f} s", report.grid.size(), report.stage_dp_s)
          : fmt::format("simulation {:.2f} s", report.stage_dp_s);
  text += fmt::format(
      "  compile       {:.2f} s (layer costs {:.2f} s: {} distinct of {} layers x {} mesh "
      "configurations = {} intra-op plans; {})\n\n",
      report.total_s, report.layer_costs_s, table.distinct_layers, table.num_layers,
      table.configs.size(), table.intra_op_solves, searched);
  Table stages({"stage", "layers", "sub-mesh", "devices", "forward/mb", "backward/mb", "update",
                "peak memory", "of"},
               {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft,
                Table::Align::kRight, Table::Align::kRight, Table::Align::kRight,
                Table::Align::kRight, Table::Align::kRight});
  // On a heterogeneous cluster, each stage's devices say their type.
  const bool mixed =
      std::any_of(plan.stages.begin(), plan.stages.end(), [&](const plan::PlannedStage& stage) {
        return stage.device_type != plan.stages.front().device_type;
      });
  for (size_t j = 0; j < plan.stages.size(); ++j) {
    const plan::PlannedStage& stage = plan.stages[j];
    const std::vector<int64_t>& devices = stage.devices;
    stages.AddRow({std::to_string(j),
                   fmt::format("{}..{}", stage.choice.first_layer, stage.choice.last_layer),
                   plan::MeshConfigName(table.configs[static_cast<size_t>(stage.choice.config)]),
                   (devices.size() == 1 ? std::to_string(devices[0])
                                        : fmt::format("{}-{}", devices.front(), devices.back())) +
                       (mixed ? " " + stage.device_type : ""),
                   FormatSeconds(stage.forward_s), FormatSeconds(stage.backward_s),
                   FormatSeconds(stage.update_s), FormatBytes(stage.peak_memory_bytes),
                   FormatBytes(stage.memory_bytes)});
  }
  text += stages.Render();
  text += AlternativesText(report, plan.step_time_s);
  if (report.grid.empty()) return text;
  Table grid({"dp", "op", "pp", "step time"}, {Table::Align::kRight, Table::Align::kRight,
                                               Table::Align::kRight, Table::Align::kLeft});
  for (const plan::UniformGridPoint& point : report.grid) {
    grid.AddRow(
        {std::to_string(point.dp), std::to_string(point.op), std::to_string(point.pp),
         point.plan.ok() ? FormatSeconds(point.plan->step_time_s) : point.plan.status().message()});
  }
  return text + "\nthe uniform grid (the best one above):\n" + grid.Render();
}

// --manual-stages FILE (Alpa's format) or --validate FILE (a saved plan): the file's stages
// evaluated on `table`.
Result<plan::PipeshardPlan> EvaluateFileStages(const std::string& path, bool saved_plan,
                                               const plan::LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster,
                                               const plan::PipeshardOptions& options) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(plan::ManualStages manual, saved_plan
                                                       ? plan::ParseSavedPlanStages(text, path)
                                                       : plan::ParseManualStages(text, path));
  if (saved_plan && manual.num_layers != table.num_layers) {
    return InvalidArgument(
        "{}: the plan cuts a model of {} layers into stages, this model has {}; plan it again",
        path, manual.num_layers, table.num_layers);
  }
  Result<std::vector<plan::StageChoice>> stages = plan::ResolveManualStages(manual, table);
  if (!stages.ok()) return stages.status().WithContext(path);
  const int64_t micro_batches = manual.num_micro_batches.value_or(options.num_micro_batches);
  if (micro_batches != options.num_micro_batches) {
    return InvalidArgument(
        "{}: num_micro_batches is {} but the model was built with --micro-batches {}; give the "
        "same number to both",
        path, micro_batches, options.num_micro_batches);
  }
  Result<plan::PipeshardPlan> plan = plan::EvaluateStages(
      table, cluster, *stages, manual.schedule.value_or(pipeline::ScheduleKind::k1F1B),
      micro_batches, manual.num_chunks);
  if (!plan.ok()) return plan.status().WithContext(path);
  return plan;
}

// --method uniform: the given (dp, op, pp), or the fastest of the whole grid (kept in `grid`).
Result<plan::PipeshardPlan> PlanUniform(const PlanOptions& flags, const plan::LayerCostTable& table,
                                        const cluster::ClusterSpec& cluster,
                                        const plan::PipeshardOptions& options,
                                        std::vector<plan::UniformGridPoint>& grid) {
  if (flags.dp || flags.op || flags.pp) {
    if (!flags.dp || !flags.op || !flags.pp) {
      return InvalidArgument(
          "--method uniform: give all of --dp, --op and --pp, or none (every grid point)");
    }
    return plan::PlanUniform(table, cluster, *flags.dp, *flags.op, *flags.pp, options);
  }
  grid = plan::SearchUniformGrid(table, cluster, options);
  ALPA_ASSIGN_OR_RETURN(plan::UniformGridPoint fastest, plan::FastestGridPoint(grid));
  return std::move(fastest.plan);
}

// Pure data parallel (every device one replica, one stage) and the best uniform grid point
// (`grid` when the command searched it already), evaluated on the same costs.
std::vector<std::pair<std::string, plan::UniformGridPoint>> Alternatives(
    const plan::LayerCostTable& table, const cluster::ClusterSpec& cluster,
    const plan::PipeshardOptions& options, std::vector<plan::UniformGridPoint> grid) {
  const int64_t devices = cluster::TotalDevices(cluster);
  std::vector<std::pair<std::string, plan::UniformGridPoint>> alternatives;
  alternatives.emplace_back(
      "data parallel",
      plan::UniformGridPoint{devices, 1, 1,
                             plan::PlanUniform(table, cluster, devices, 1, 1, options)});
  if (grid.empty()) grid = plan::SearchUniformGrid(table, cluster, options);
  Result<plan::UniformGridPoint> fastest = plan::FastestGridPoint(grid);
  alternatives.emplace_back("best uniform grid point",
                            fastest.ok() ? std::move(fastest).value()
                                         : plan::UniformGridPoint{0, 0, 0, fastest.status()});
  return alternatives;
}

// What --validate compares against: the saved plan's header (its stages are parsed with
// plan::ParseSavedPlanStages). Absent fields stay empty; the stages' parser names what is wrong.
struct SavedPlan {
  std::string model, cluster;
  std::optional<int64_t> num_micro_batches;
  std::optional<double> step_time_s;
};

Result<SavedPlan> ReadSavedPlanHeader(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const nlohmann::json saved = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  SavedPlan header;
  if (!saved.is_object()) return header;
  if (saved.contains("model") && saved["model"].is_object()) {
    header.model = saved["model"].value("name", "");
  }
  header.cluster = saved.value("cluster", "");
  if (saved.contains("num_micro_batches") && saved["num_micro_batches"].is_number_integer()) {
    header.num_micro_batches = saved["num_micro_batches"].get<int64_t>();
  }
  if (saved.contains("estimate") && saved["estimate"].is_object() &&
      saved["estimate"].contains("step_time_s") && saved["estimate"]["step_time_s"].is_number()) {
    header.step_time_s = saved["estimate"]["step_time_s"].get<double>();
  }
  return header;
}

// "re-costed FILE (gpt-2.6b on p3.16xlarge:1x8, 100.4 s): 98.2 s, 0.98x" for --validate.
std::string ValidationLine(const std::string& path, const SavedPlan& saved, double step_time_s) {
  std::string line =
      fmt::format("re-costed {} (made for {} on {}", path, saved.model, saved.cluster);
  if (saved.step_time_s) line += fmt::format(", step time {}", FormatSeconds(*saved.step_time_s));
  line += fmt::format("): every stage fits; step time {}", FormatSeconds(step_time_s));
  if (saved.step_time_s && *saved.step_time_s > 0) {
    line += fmt::format(" ({:.2f}x the saved estimate)", step_time_s / *saved.step_time_s);
  }
  return line + "\n";
}

Status WriteReport(const std::string& path, const nlohmann::ordered_json& document,
                   const plan::PipeshardPlan& plan, const std::string& model_name) {
  const std::string timeline = pipeline::ToSvgGantt(plan.simulation, model_name);
  return WriteTextFile(path, RenderPlanReport(document, timeline), "--report");
}

// --search-micro-batches: one row per micro-batch count tried.
struct MicroBatchTrial {
  int64_t num_micro_batches = 0;
  Result<double> step_time_s = 0.0;  // or why no plan was found
};

// One planning run at the flags' micro-batch count.
struct PlannedAtCount {
  ZooStep zoo;
  plan::LayerCostTable table;
  plan::PipeshardPlan plan;
  std::vector<plan::UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  double layer_costs_s = 0;
  double stage_dp_s = 0;
};

// Progress lines go to a terminal, never into --json output or a log a script parses.
bool ShowsProgress(const PlanOptions& options) { return isatty(STDERR_FILENO) && !options.json; }

Result<PlannedAtCount> PlanAtCount(const PlanOptions& options, const ZooFlags& flags,
                                   const cluster::ClusterSpec& cluster) {
  const Clock::time_point start = Clock::now();
  ALPA_ASSIGN_OR_RETURN(ZooStep zoo, BuildZooLoss(options.model_path, flags));
  const models::Model& model = zoo.zoo.model;
  const int64_t micro_batches = zoo.training.num_micro_batches;
  const int64_t micro_batch_size = zoo.batch / micro_batches;
  const std::vector<plan::MeshConfig> configs = plan::EnumerateMeshConfigs(
      cluster, cluster::EnumerateSubmeshes(cluster, SubmeshSpaceOf(options.submesh_space)),
      micro_batch_size,
      options.logical_space == "all" ? plan::LogicalSpace::kAll
                                     : plan::LogicalSpace::kSingleNodeModelParallel);
  plan::LayerCostOptions cost_options;
  cost_options.auto_sharding.strategy.allow_partial_outputs = options.prefer_reduce_scatter;
  cost_options.auto_sharding.strategy.replicate_unknown_ops = options.replicate_unknown_ops;
  cost_options.auto_sharding.solve.time_limit_s = options.time_limit_s;
  cost_options.auto_layers = options.auto_layers;
  const bool show_progress = ShowsProgress(options);
  cost_options.progress = [&](int64_t done, int64_t total) {
    if (show_progress) {
      fmt::print(stderr,
                 "\r{} micro-batches: layer costs {}/{} distinct layers x {} mesh configurations",
                 micro_batches, done, total, configs.size());
      if (done == total) fmt::print(stderr, "\n");
    }
  };
  ALPA_ASSIGN_OR_RETURN(plan::LayerCostTable table,
                        plan::ComputeLayerCosts(*model.loss, model.weights, zoo.training, cluster,
                                                configs, micro_batch_size, cost_options));
  const double layer_costs_s = SecondsSince(start);

  const Clock::time_point dp_start = Clock::now();
  plan::PipeshardOptions planner_options;
  planner_options.num_micro_batches = micro_batches;
  planner_options.schedules = SchedulesOf(options.schedule);
  if (options.imbalance_tolerance >= 0) {
    planner_options.imbalance_tolerance = options.imbalance_tolerance;
  }
  planner_options.extra_candidates = plan::UniformGridStages(
      table, cluster,
      std::ranges::count(planner_options.schedules, pipeline::ScheduleKind::kInterleaved1F1B) > 0);
  std::vector<plan::UniformGridPoint> grid;
  const std::string& stages_path =
      options.validate_path.empty() ? options.manual_stages_path : options.validate_path;
  ALPA_ASSIGN_OR_RETURN(
      plan::PipeshardPlan plan,
      options.method == "uniform" ? PlanUniform(options, table, cluster, planner_options, grid)
      : stages_path.empty()       ? plan::PlanPipeshard(table, cluster, planner_options)
                            : EvaluateFileStages(stages_path, !options.validate_path.empty(), table,
                                                 cluster, planner_options));
  return PlannedAtCount{std::move(zoo),  std::move(table), std::move(plan),
                        std::move(grid), layer_costs_s,    SecondsSince(dp_start)};
}

// Alpa leaves the number of micro-batches to a grid search by hand. Tries M = 1, 2, 4, ... (M
// dividing the global batch) and keeps the fastest plan; fewer micro-batches have a larger
// pipeline bubble, more have more per-micro-batch overhead (weights read and collectives'
// latency per micro-batch), so the search stops two counts after the step time stops improving
// (a count where nothing fits does not stop it before the first plan: large micro-batches may
// not fit).
Result<PlannedAtCount> SearchMicroBatches(const PlanOptions& options,
                                          const cluster::ClusterSpec& cluster,
                                          std::vector<MicroBatchTrial>& trials) {
  ALPA_ASSIGN_OR_RETURN(ZooStep probe, BuildZooLoss(options.model_path, options.zoo));
  std::optional<PlannedAtCount> best;
  Status last_error = Status::Ok();
  int worse_in_a_row = 0;
  for (int64_t count = 1; count <= probe.batch && worse_in_a_row < 2; count *= 2) {
    if (probe.batch % count != 0) continue;
    ZooFlags flags = options.zoo;
    flags.micro_batches = count;
    Result<PlannedAtCount> planned = PlanAtCount(options, flags, cluster);
    if (!planned.ok() && planned.status().code() == StatusCode::kInvalidArgument) {
      return planned.status();  // bad input, not a count that does not fit
    }
    trials.push_back({count, planned.ok() ? Result<double>(planned->plan.step_time_s)
                                          : Result<double>(planned.status())});
    if (planned.ok() && (!best || planned->plan.step_time_s < best->plan.step_time_s)) {
      best = std::move(planned).value();
      worse_in_a_row = 0;
    } else if (best) {
      ++worse_in_a_row;
    }
    if (!planned.ok()) last_error = planned.status();
    if (ShowsProgress(options)) {
      const std::string tried = trials.back().step_time_s.ok()
                                    ? FormatSeconds(*trials.back().step_time_s) + " per step"
                                    : std::string("nothing fits");
      const std::string so_far =
          best ? fmt::format("M = {} at {}", best->zoo.training.num_micro_batches,
                             FormatSeconds(best->plan.step_time_s))
               : std::string("none");
      fmt::print(stderr, "micro-batch search: M = {} (global batch {}): {}; best so far {}\n",
                 count, probe.batch, tried, so_far);
    }
  }
  if (!best) return last_error;
  return std::move(best).value();
}

nlohmann::ordered_json TrialsJson(const std::vector<MicroBatchTrial>& trials) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MicroBatchTrial& trial : trials) {
    rows.push_back({{"num_micro_batches", trial.num_micro_batches},
                    {"step_time_s",
                     trial.step_time_s.ok() ? nlohmann::ordered_json(*trial.step_time_s) : nullptr},
                    {"error", trial.step_time_s.ok() ? "" : trial.step_time_s.status().message()}});
  }
  return rows;
}

std::string TrialsText(const std::vector<MicroBatchTrial>& trials) {
  Table table({"micro-batches", "step time"}, {Table::Align::kRight, Table::Align::kLeft});
  for (const MicroBatchTrial& trial : trials) {
    // The reason's first clause ("no stage plan fits the cluster's 8 devices"); --json has it
    // whole.
    const std::string reason = trial.step_time_s.ok()
                                   ? ""
                                   : trial.step_time_s.status().message().substr(
                                         0, trial.step_time_s.status().message().find(": "));
    table.AddRow({std::to_string(trial.num_micro_batches),
                  trial.step_time_s.ok() ? FormatSeconds(*trial.step_time_s) : reason});
  }
  return "\nmicro-batch counts tried (the fastest kept):\n" + table.Render();
}

}  // namespace

int RunPipeshardPlan(const PlanOptions& flags) {
  const Clock::time_point start = Clock::now();
  if (!IsZooArgument(flags.model_path)) {
    return ReportError(InvalidArgument(
        "--method {} needs a zoo model: its layers come from the model's layer markers, which "
        "an HLO file of a whole train step does not separate into forward and backward; plan {} "
        "with --method shard",
        flags.method, flags.model_path));
  }
  if (!flags.mesh.empty()) {
    return ReportError(InvalidArgument(
        "--mesh {}: pipeshard chooses each stage's logical mesh; leave --mesh out", flags.mesh));
  }
  const bool fixed_stages = flags.method == "uniform" || !flags.manual_stages_path.empty() ||
                            !flags.validate_path.empty();
  if (flags.search_micro_batches && (fixed_stages || flags.zoo.micro_batches)) {
    return ReportError(InvalidArgument(
        "--search-micro-batches searches stages and micro-batches together: leave out "
        "--micro-batches, --manual-stages, --validate and --method uniform"));
  }
  PlanOptions options = flags;
  // Without --micro-batches the count is searched with the stages (Alpa leaves it to the user).
  if (!fixed_stages && !flags.zoo.micro_batches) options.search_micro_batches = true;
  SavedPlan saved;
  if (!options.validate_path.empty()) {
    Result<SavedPlan> header = ReadSavedPlanHeader(options.validate_path);
    if (!header.ok()) return ReportError(header.status());
    saved = std::move(header).value();
    // Re-cost at the saved micro-batch count unless --micro-batches asks otherwise.
    if (!options.zoo.micro_batches) options.zoo.micro_batches = saved.num_micro_batches;
  }
  Result<cluster::ClusterSpec> cluster = ProfiledCluster(options.cluster, options.profile_path);
  if (!cluster.ok()) return ReportError(cluster.status());
  std::vector<MicroBatchTrial> trials;
  Result<PlannedAtCount> planned = options.search_micro_batches
                                       ? SearchMicroBatches(options, *cluster, trials)
                                       : PlanAtCount(options, options.zoo, *cluster);
  if (!planned.ok()) return ReportError(planned.status());
  const plan::LayerCostTable& table = planned->table;
  const plan::PipeshardPlan& plan = planned->plan;

  PipeshardReport report;
  report.method = options.method;
  report.grid = std::move(planned->grid);
  report.stage_dp_s = planned->stage_dp_s;
  report.layer_costs_s = planned->layer_costs_s;
  const Clock::time_point alternatives_start = Clock::now();
  plan::PipeshardOptions alternative_options;
  alternative_options.num_micro_batches = plan.num_micro_batches;
  alternative_options.schedules = SchedulesOf(options.schedule);
  report.alternatives = Alternatives(table, *cluster, alternative_options, report.grid);
  report.alternatives_s = SecondsSince(alternatives_start);

  const models::Model& model = planned->zoo.zoo.model;
  report.model_name = planned->zoo.zoo.entry.name;
  report.fingerprint = ModuleFingerprint(*model.loss);
  for (const ir::Instruction* parameter : model.loss->entry()->parameters()) {
    report.parameter_names.push_back(parameter->name());
  }
  report.cluster = options.cluster;
  report.micro_batch_size = planned->zoo.batch / plan.num_micro_batches;
  if (!options.search_micro_batches) {
    if (std::optional<std::string> warning = FewMicroBatchesWarning(plan)) {
      report.warnings.push_back(std::move(*warning));
    }
  }
  report.devices = static_cast<double>(cluster::TotalDevices(*cluster));
  for (double flops : table.flops) report.step_flops += flops;
  report.step_flops *= static_cast<double>(plan.num_micro_batches);
  report.total_s = SecondsSince(start);
  nlohmann::ordered_json document = PlanJson(report, table, *cluster, plan);
  std::string text = PlanText(report, table, plan);
  if (!trials.empty()) {
    document["micro_batch_search"] = TrialsJson(trials);
    text += TrialsText(trials);
  }
  if (!options.report_path.empty()) {
    const Status written = WriteReport(options.report_path, document, plan, report.model_name);
    if (!written.ok()) return ReportError(written);
  }
  if (!options.validate_path.empty()) {
    text = ValidationLine(options.validate_path, saved, plan.step_time_s) + text;
  }
  return EmitDocument(document, text, options.output_path, options.json);
}

}  // namespace alpa::tools
