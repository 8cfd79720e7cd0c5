#include "plan/pipeshard_document.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "cluster/submesh.h"
#include "cost/collective_cost.h"
#include "hlo/printer.h"
#include "plan/plan_document.h"
#include "support/fingerprint.h"
#include "support/table.h"
#include "support/units.h"

namespace alpa::plan {
namespace {

nlohmann::ordered_json CommJson(const std::map<cost::CollectiveKind, int64_t>& collectives) {
  nlohmann::ordered_json comm = nlohmann::ordered_json::object();
  for (const auto& [kind, count] : collectives) comm[cost::CollectiveKindName(kind)] = count;
  return comm;
}

nlohmann::ordered_json GridPointJson(const UniformGridPoint& point) {
  return {
      {"dp", point.dp},
      {"op", point.op},
      {"pp", point.pp},
      {"step_time_s", point.plan.ok() ? nlohmann::ordered_json(point.plan->step_time_s) : nullptr},
      {"error", point.plan.ok() ? "" : point.plan.status().message()}};
}

nlohmann::ordered_json GridJson(const std::vector<UniformGridPoint>& grid) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const UniformGridPoint& point : grid) points.push_back(GridPointJson(point));
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

// Every stage list the planner simulated (PipeshardPlan::evaluated), each stage as its layer range
// with its sub-mesh and logical mesh.
nlohmann::ordered_json EvaluatedCandidatesJson(const LayerCostTable& table,
                                               const PipeshardPlan& plan) {
  auto optional = [](const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const EvaluatedCandidate& candidate : plan.evaluated) {
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const StageChoice& stage : candidate.stages.stages) {
      const MeshConfig& config = table.configs[static_cast<size_t>(stage.config)];
      stages.push_back({{"layers", {stage.first_layer, stage.last_layer}},
                        {"submesh", config.submesh.shape},
                        {"logical_mesh", config.logical_shape},
                        {"mesh_config", MeshConfigName(config)}});
    }
    candidates.push_back({{"source", candidate.source},
                          {"num_chunks", candidate.stages.num_chunks},
                          {"stages", std::move(stages)},
                          {"dp_objective_s", optional(candidate.dp_objective_s)},
                          {"step_time_s", optional(candidate.step_time_s)},
                          {"schedule", candidate.schedule},
                          {"error", candidate.error}});
  }
  return candidates;
}

// Each weight of the stage's layers (once, in layer order) with its XLA sharding.
nlohmann::ordered_json StageParametersJson(const PipeshardReport& report,
                                           const LayerCostTable& table, const StageChoice& choice) {
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

}  // namespace

PipeshardReport ReportOfPlan(const ir::Module& loss, const LayerCostTable& table,
                             const cluster::ClusterSpec& cluster, const PipeshardPlan& plan,
                             const std::vector<pipeline::ScheduleKind>& schedules,
                             std::vector<UniformGridPoint> grid) {
  const auto start = std::chrono::steady_clock::now();
  PipeshardReport report;
  PipeshardOptions options;
  options.num_micro_batches = plan.num_micro_batches;
  options.schedules = schedules;
  const int64_t devices = cluster::TotalDevices(cluster);
  report.alternatives.emplace_back(
      "data parallel",
      UniformGridPoint{devices, 1, 1, PlanUniform(table, cluster, devices, 1, 1, options)});
  if (grid.empty()) grid = SearchUniformGrid(table, cluster, options);
  Result<UniformGridPoint> fastest = FastestGridPoint(grid);
  report.alternatives.emplace_back(
      "best uniform grid point",
      fastest.ok() ? std::move(fastest).value() : UniformGridPoint{0, 0, 0, fastest.status()});
  report.alternatives_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.fingerprint = FingerprintHex(hlo::PrintModule(loss));
  for (const ir::Instruction* parameter : loss.entry()->parameters()) {
    report.parameter_names.push_back(parameter->name());
  }
  report.devices = static_cast<double>(devices);
  for (double flops : table.flops) report.step_flops += flops;
  report.step_flops *= static_cast<double>(plan.num_micro_batches);
  return report;
}

nlohmann::ordered_json StageMemoryJson(const PlannedStage& stage) {
  return {{"static_bytes", stage.static_bytes},
          {"activation_bytes_per_micro_batch", stage.activation_bytes},
          {"micro_batches_in_flight", stage.micro_batches_in_flight},
          {"temporary_bytes", stage.temporary_bytes},
          {"pending_gradient_bytes", stage.pending_gradient_bytes},
          {"update_temporary_bytes", stage.update_temporary_bytes}};
}

// A micro-batch count the user fixed below the plan's pipeline depth leaves stages idle most of
// the step, and Alpa's formula sum t + (B - 1) max t, which assumes a steady state where every
// stage is busy, is no guide there: the step time is the simulator's.
std::optional<std::string> FewMicroBatchesWarning(const PipeshardPlan& plan) {
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

nlohmann::ordered_json PipeshardPlanJson(const PipeshardReport& report, const LayerCostTable& table,
                                         const cluster::ClusterSpec& cluster,
                                         const PipeshardPlan& plan) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const PlannedStage& stage : plan.stages) {
    const MeshConfig& config = table.configs[static_cast<size_t>(stage.choice.config)];
    stages.push_back(
        {{"layers", {stage.choice.first_layer, stage.choice.last_layer}},
         {"devices", stage.devices},
         {"device_type", stage.device_type},
         {"submesh", config.submesh.shape},
         {"logical_mesh", config.logical_shape},
         {"mesh_config", MeshConfigName(config)},
         {"force_batch_dim_to_mesh_dim", config.force_batch ? nlohmann::ordered_json(0) : nullptr},
         {"forward_time_s", stage.forward_s},
         {"backward_time_s", stage.backward_s},
         {"update_time_s", stage.update_s},
         {"peak_memory_bytes", stage.peak_memory_bytes},
         {"device_memory_bytes", stage.memory_bytes},
         {"memory", StageMemoryJson(stage)},
         {"comm", CommJson(stage.collectives)},
         {"parameters", StageParametersJson(report, table, stage.choice)}});
  }
  const nlohmann::ordered_json budget =
      report.memory_budget_bytes ? nlohmann::ordered_json(*report.memory_budget_bytes) : nullptr;
  return {{"format", "alpa-plan"},
          {"version", 2},
          {"model", {{"name", report.model_name}, {"fingerprint", report.fingerprint}}},
          {"cluster", report.cluster},
          {"cluster_shape", ClusterShapeJson(cluster)},
          {"memory_budget_bytes", budget},
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
            {"transfer_bytes_per_step", plan.transfer_bytes_per_step},
            {"gather_bytes_per_step", plan.gather_bytes_per_step},
            {"tflops", report.step_flops / plan.step_time_s / report.devices / 1e12}}},
          {"stages", stages},
          {"warnings", report.warnings},
          {"alternatives", AlternativesJson(report)},
          {"grid", GridJson(report.grid)},
          {"stage_dp", {{"candidates", EvaluatedCandidatesJson(table, plan)}}},
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

std::string PipeshardPlanText(const PipeshardReport& report, const LayerCostTable& table,
                              const PipeshardPlan& plan) {
  const std::string chunks =
      document::ChunksNote(plan.num_chunks, static_cast<int64_t>(plan.stages.size()));
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
  if (plan.transfer_bytes_per_step > 0) {
    text += fmt::format(
        "  transfers     {} per step between sub-meshes (activations and their gradients, tied "
        "weights' gradients)\n",
        FormatBytes(plan.transfer_bytes_per_step));
  }
  if (plan.gather_bytes_per_step > 0) {
    text += fmt::format(
        "  gathers       {} per step inside the receiving sub-meshes (their replicas' local "
        "all-gathers)\n",
        FormatBytes(plan.gather_bytes_per_step));
  }
  if (report.memory_budget_bytes) {
    text += fmt::format("  memory        {} per device (--memory-budget), every stage within it\n",
                        FormatBytes(*report.memory_budget_bytes));
  }
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
      std::any_of(plan.stages.begin(), plan.stages.end(), [&](const PlannedStage& stage) {
        return stage.device_type != plan.stages.front().device_type;
      });
  for (size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& stage = plan.stages[j];
    const std::vector<int64_t>& devices = stage.devices;
    stages.AddRow({std::to_string(j),
                   fmt::format("{}..{}", stage.choice.first_layer, stage.choice.last_layer),
                   MeshConfigName(table.configs[static_cast<size_t>(stage.choice.config)]),
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
  for (const UniformGridPoint& point : report.grid) {
    grid.AddRow(
        {std::to_string(point.dp), std::to_string(point.op), std::to_string(point.pp),
         point.plan.ok() ? FormatSeconds(point.plan->step_time_s) : point.plan.status().message()});
  }
  return text + "\nthe uniform grid (the best one above):\n" + grid.Render();
}

}  // namespace alpa::plan
