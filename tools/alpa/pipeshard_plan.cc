#include "tools/alpa/pipeshard_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "plan/layer_costs.h"
#include "plan/manual_stages.h"
#include "plan/pipeshard_planner.h"
#include "plan/uniform_plans.h"
#include "support/file.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
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
  if (name == "1f1b") return {pipeline::ScheduleKind::k1F1B};
  if (name == "gpipe") return {pipeline::ScheduleKind::kGPipe};
  return {pipeline::ScheduleKind::k1F1B, pipeline::ScheduleKind::kGPipe};
}

struct PipeshardReport {
  std::string method;
  std::vector<plan::UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  std::string model_name;
  std::string fingerprint;
  std::string cluster;
  int64_t micro_batch_size = 0;
  double step_flops = 0;  // of the whole batch (all micro-batches), every layer's step
  double devices = 1;
  double total_s = 0;
  double layer_costs_s = 0;
  double stage_dp_s = 0;
};

nlohmann::ordered_json CommJson(const std::map<cost::CollectiveKind, int64_t>& collectives) {
  nlohmann::ordered_json comm = nlohmann::ordered_json::object();
  for (const auto& [kind, count] : collectives) comm[cost::CollectiveKindName(kind)] = count;
  return comm;
}

nlohmann::ordered_json GridJson(const std::vector<plan::UniformGridPoint>& grid) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const plan::UniformGridPoint& point : grid) {
    points.push_back({{"dp", point.dp},
                      {"op", point.op},
                      {"pp", point.pp},
                      {"step_time_s",
                       point.plan.ok() ? nlohmann::ordered_json(point.plan->step_time_s) : nullptr},
                      {"error", point.plan.ok() ? "" : point.plan.status().message()}});
  }
  return points;
}

nlohmann::ordered_json PlanJson(const PipeshardReport& report, const plan::LayerCostTable& table,
                                const plan::PipeshardPlan& plan) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const plan::PlannedStage& stage : plan.stages) {
    const plan::MeshConfig& config = table.configs[static_cast<size_t>(stage.choice.config)];
    stages.push_back(
        {{"layers", {stage.choice.first_layer, stage.choice.last_layer}},
         {"devices", stage.devices},
         {"submesh", config.submesh.shape},
         {"logical_mesh", config.logical_shape},
         {"force_batch_dim_to_mesh_dim", config.force_batch ? nlohmann::ordered_json(0) : nullptr},
         {"forward_time_s", stage.forward_s},
         {"backward_time_s", stage.backward_s},
         {"update_time_s", stage.update_s},
         {"peak_memory_bytes", stage.peak_memory_bytes},
         {"device_memory_bytes", stage.memory_bytes},
         {"comm", CommJson(stage.collectives)}});
  }
  return {{"format", "alpa-plan"},
          {"version", 2},
          {"model", {{"name", report.model_name}, {"fingerprint", report.fingerprint}}},
          {"cluster", report.cluster},
          {"method", report.method},
          {"schedule", pipeline::ScheduleKindName(plan.schedule)},
          {"num_micro_batches", plan.num_micro_batches},
          {"micro_batch_size", report.micro_batch_size},
          {"estimate",
           {{"step_time_s", plan.step_time_s},
            {"pipeline_s", plan.pipeline_s},
            {"alpa_formula_s", plan.alpa_formula_s},
            {"bubble_fraction", plan.bubble_fraction},
            {"tflops", report.step_flops / plan.step_time_s / report.devices / 1e12}}},
          {"stages", stages},
          {"grid", GridJson(report.grid)},
          {"compile",
           {{"total_s", report.total_s},
            {"layer_costs_s", report.layer_costs_s},
            {"stage_dp_s", report.stage_dp_s},
            {"distinct_layers", table.distinct_layers},
            {"mesh_configs", table.configs.size()},
            {"intra_op_solves", table.intra_op_solves},
            {"candidates_evaluated", plan.candidates_evaluated}}}};
}

std::string PlanText(const PipeshardReport& report, const plan::LayerCostTable& table,
                     const plan::PipeshardPlan& plan) {
  std::string text = fmt::format(
      "{} plan of {} on {}: {} stage(s), {} with {} micro-batches of {}\n", report.method,
      report.model_name, report.cluster, plan.stages.size(),
      pipeline::ScheduleKindName(plan.schedule), plan.num_micro_batches, report.micro_batch_size);
  text += fmt::format(
      "  step time     {} (pipeline {}, bubble {:.1f}%; Alpa's formula gives {} for the "
      "pipeline)\n",
      FormatSeconds(plan.step_time_s), FormatSeconds(plan.pipeline_s), 100 * plan.bubble_fraction,
      FormatSeconds(plan.alpa_formula_s));
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
  for (size_t j = 0; j < plan.stages.size(); ++j) {
    const plan::PlannedStage& stage = plan.stages[j];
    const std::vector<int64_t>& devices = stage.devices;
    stages.AddRow({std::to_string(j),
                   fmt::format("{}..{}", stage.choice.first_layer, stage.choice.last_layer),
                   plan::MeshConfigName(table.configs[static_cast<size_t>(stage.choice.config)]),
                   devices.size() == 1 ? std::to_string(devices[0])
                                       : fmt::format("{}-{}", devices.front(), devices.back()),
                   FormatSeconds(stage.forward_s), FormatSeconds(stage.backward_s),
                   FormatSeconds(stage.update_s), FormatBytes(stage.peak_memory_bytes),
                   FormatBytes(stage.memory_bytes)});
  }
  text += stages.Render();
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

Result<plan::PipeshardPlan> EvaluateManualStages(const std::string& path,
                                                 const plan::LayerCostTable& table,
                                                 const cluster::ClusterSpec& cluster,
                                                 const plan::PipeshardOptions& options) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(plan::ManualStages manual, plan::ParseManualStages(text, path));
  Result<std::vector<plan::StageChoice>> stages = plan::ResolveManualStages(manual, table);
  if (!stages.ok()) return stages.status().WithContext(path);
  const int64_t micro_batches = manual.num_micro_batches.value_or(options.num_micro_batches);
  if (micro_batches != options.num_micro_batches) {
    return InvalidArgument(
        "{}: num_micro_batches is {} but the model was built with --micro-batches {}; give the "
        "same number to both",
        path, micro_batches, options.num_micro_batches);
  }
  return plan::EvaluateStages(table, cluster, *stages,
                              manual.schedule.value_or(pipeline::ScheduleKind::k1F1B),
                              micro_batches);
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
  return plan::FastestGridPoint(grid);
}

}  // namespace

int RunPipeshardPlan(const PlanOptions& options) {
  const Clock::time_point start = Clock::now();
  if (!IsZooArgument(options.model_path)) {
    return ReportError(InvalidArgument(
        "--method {} needs a zoo model: its layers come from the model's layer markers, which "
        "an HLO file of a whole train step does not separate into forward and backward; plan {} "
        "with --method shard",
        options.method, options.model_path));
  }
  if (!options.mesh.empty()) {
    return ReportError(InvalidArgument(
        "--mesh {}: pipeshard chooses each stage's logical mesh; leave --mesh out", options.mesh));
  }
  Result<ZooStep> zoo = BuildZooLoss(options.model_path, options.zoo);
  if (!zoo.ok()) return ReportError(zoo.status());
  Result<cluster::ClusterSpec> cluster = ProfiledCluster(options.cluster, options.profile_path);
  if (!cluster.ok()) return ReportError(cluster.status());

  const models::Model& model = zoo->zoo.model;
  const int64_t micro_batch_size = zoo->batch / zoo->training.num_micro_batches;
  const std::vector<plan::MeshConfig> configs = plan::EnumerateMeshConfigs(
      *cluster, cluster::EnumerateSubmeshes(*cluster, SubmeshSpaceOf(options.submesh_space)),
      micro_batch_size,
      options.logical_space == "all" ? plan::LogicalSpace::kAll
                                     : plan::LogicalSpace::kSingleNodeModelParallel);
  plan::LayerCostOptions cost_options;
  cost_options.auto_sharding.strategy.allow_partial_outputs = options.prefer_reduce_scatter;
  cost_options.auto_sharding.strategy.replicate_unknown_ops = options.replicate_unknown_ops;
  cost_options.auto_sharding.solve.time_limit_s = options.time_limit_s;
  const bool show_progress = isatty(STDERR_FILENO) && !options.json;
  cost_options.progress = [&](int64_t done, int64_t total) {
    if (show_progress) {
      fmt::print(stderr, "\rlayer costs: {}/{} distinct layers x {} mesh configurations", done,
                 total, configs.size());
      if (done == total) fmt::print(stderr, "\n");
    }
  };
  Result<plan::LayerCostTable> table = plan::ComputeLayerCosts(
      *model.loss, model.weights, zoo->training, *cluster, configs, cost_options);
  if (!table.ok()) return ReportError(table.status());
  const double layer_costs_s = SecondsSince(start);

  const Clock::time_point dp_start = Clock::now();
  plan::PipeshardOptions planner_options;
  planner_options.num_micro_batches = zoo->training.num_micro_batches;
  planner_options.schedules = SchedulesOf(options.schedule);
  if (options.imbalance_tolerance >= 0) {
    planner_options.imbalance_tolerance = options.imbalance_tolerance;
  }
  PipeshardReport report;
  report.method = options.method;
  Result<plan::PipeshardPlan> plan =
      options.method == "uniform"
          ? PlanUniform(options, *table, *cluster, planner_options, report.grid)
      : options.manual_stages_path.empty()
          ? plan::PlanPipeshard(*table, *cluster, planner_options)
          : EvaluateManualStages(options.manual_stages_path, *table, *cluster, planner_options);
  if (!plan.ok()) return ReportError(plan.status());
  report.stage_dp_s = SecondsSince(dp_start);
  report.layer_costs_s = layer_costs_s;

  report.model_name = zoo->zoo.entry.name;
  report.fingerprint = ModuleFingerprint(*model.loss);
  report.cluster = options.cluster;
  report.micro_batch_size = micro_batch_size;
  report.devices = static_cast<double>(cluster::TotalDevices(*cluster));
  for (double flops : table->flops) report.step_flops += flops;
  report.step_flops *= static_cast<double>(plan->num_micro_batches);
  report.total_s = SecondsSince(start);
  return EmitDocument(PlanJson(report, *table, *plan), PlanText(report, *table, *plan),
                      options.output_path, options.json);
}

}  // namespace alpa::tools
