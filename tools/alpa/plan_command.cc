#include "tools/alpa/plan_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "api/dumped_train_step.h"
#include "api/parallelize.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "cost/flop_count.h"
#include "hlo/printer.h"
#include "sharding/auto_sharding.h"
#include "sharding/hlo_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/pins.h"
#include "solver/iopddl_json.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/memory_report.h"
#include "tools/alpa/pipeshard_plan.h"
#include "tools/alpa/profile_command.h"

namespace alpa::tools {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using api::PlannedMesh;

// The entry parameters as the parallel methods see them. A zoo step's layout gives the roles,
// and step(W..., state..., t, B...) -> (loss, W'..., state'..., t + 1) replaces parameter i before
// the batch by element i + 1 of the result; an HLO file's aliases give them for a dumped train
// step (api/dumped_train_step.h).
Result<std::vector<sharding::MethodParameter>> MethodParameters(const ModelArgument& model) {
  if (!model.zoo) {
    ALPA_ASSIGN_OR_RETURN(api::TrainStep step, api::DescribeDumpedTrainStep(model.module()));
    return std::move(step.parameters);
  }
  ALPA_ASSIGN_OR_RETURN(api::TrainStep step,
                        api::DescribeTrainStep(model.module(), StepLayout(*model.zoo)));
  return std::move(step.parameters);
}

// The user's pins for a mesh shape, in precedence order: the shardings file, the HLO's
// annotations (the method's rules come after them, in api::PlanMeshes).
Result<sharding::Pins> UserPins(const PlanOptions& options, const ir::Computation& entry,
                                const std::vector<int64_t>& shape) {
  sharding::Pins pins;
  if (!options.shardings_path.empty()) {
    ALPA_ASSIGN_OR_RETURN(pins, sharding::ReadShardingsFile(options.shardings_path, entry, shape));
  }
  if (!options.ignore_hlo_shardings) {
    ALPA_ASSIGN_OR_RETURN(sharding::Pins annotated, sharding::PinsFromHloShardings(entry, shape));
    sharding::MergePins(pins, annotated);
  }
  return pins;
}

std::string ReadableSpecs(const sharding::LeafSpecs& specs) {
  std::vector<std::string> parts;
  for (const sharding::ShardingSpec& spec : specs) parts.push_back(sharding::ToString(spec));
  return fmt::format("{}", fmt::join(parts, " "));
}

nlohmann::ordered_json CommJson(const sharding::CommunicationSummary& comm) {
  nlohmann::ordered_json json;
  for (cost::CollectiveKind kind :
       {cost::CollectiveKind::kAllReduce, cost::CollectiveKind::kAllGather,
        cost::CollectiveKind::kReduceScatter, cost::CollectiveKind::kAllToAll,
        cost::CollectiveKind::kCollectivePermute, cost::CollectiveKind::kSendRecv}) {
    auto it = comm.count.find(kind);
    json[std::string(cost::CollectiveKindName(kind))] = it == comm.count.end() ? 0 : it->second;
  }
  json["bytes"] = comm.bytes;
  return json;
}

struct PlanReport {
  std::string model_name;
  std::string fingerprint;
  std::string cluster;
  std::string method;
  int64_t batch_axis = -1;
  int64_t num_micro_batches = 1;
  double dot_flops = 0;
  double total_seconds = 0;
  int64_t meshes_tried = 0;
  nlohmann::ordered_json peak;  // where the plan's peak is (memory_report.h, PeakJson)
};

double Tflops(const PlanReport& report, const sharding::ShardingEstimate& estimate) {
  return estimate.step_seconds() > 0 ? report.dot_flops / estimate.step_seconds() / 1e12 : 0;
}

nlohmann::ordered_json PlanJson(const PlanReport& report, const PlannedMesh& best) {
  const sharding::ShardingSolution& solution = best.solution;
  const sharding::ShardingEstimate& estimate = solution.estimate;
  nlohmann::ordered_json json;
  json["format"] = "alpa-plan";
  json["version"] = 1;
  json["model"] = {{"name", report.model_name}, {"fingerprint", report.fingerprint}};
  json["cluster"] = report.cluster;
  json["method"] = report.method;
  json["mesh"] = best.shape;
  json["batch_axis"] = report.batch_axis >= 0 ? nlohmann::ordered_json(report.batch_axis)
                                              : nlohmann::ordered_json(nullptr);
  json["num_micro_batches"] = report.num_micro_batches;
  json["pins"] = best.pins;
  json["estimate"] = {{"step_time_s", estimate.step_seconds()},
                      {"compute_s", estimate.compute_seconds},
                      {"communication_s", estimate.communication_seconds},
                      {"resharding_s", estimate.resharding_seconds},
                      {"tflops", Tflops(report, estimate)},
                      {"peak_memory_bytes", estimate.peak_memory_bytes},
                      {"peak", report.peak},
                      {"memory_budget_bytes", solution.memory_budget_bytes},
                      {"comm", CommJson(estimate.communication)}};
  json["compile"] = {{"total_s", report.total_seconds},
                     {"solver_s", solution.timings.solve_s},
                     {"strategies_s", solution.timings.generate_s},
                     {"cost_graph_s", solution.timings.cost_graph_s},
                     {"estimate_s", solution.timings.estimate_s},
                     {"solver_status", solver::SolveStatusName(solution.answer.status)},
                     {"ilp_nodes", solution.solver_nodes},
                     {"ilp_edges", solution.solver_edges},
                     {"meshes_tried", report.meshes_tried}};
  nlohmann::ordered_json shardings = nlohmann::ordered_json::object();
  nlohmann::ordered_json strategies = nlohmann::ordered_json::object();
  for (size_t v = 0; v < solution.graph.nodes.size(); ++v) {
    const std::string& name = solution.graph.nodes[v].instruction->name();
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    shardings[name] = sharding::ToHloShardingText(chosen.output, best.shape);
    strategies[name] = chosen.name;
  }
  json["shardings"] = std::move(shardings);
  json["strategies"] = std::move(strategies);
  return json;
}

std::string PlanText(const PlanReport& report, const PlannedMesh& best) {
  const sharding::ShardingSolution& solution = best.solution;
  const sharding::ShardingEstimate& estimate = solution.estimate;
  std::string text = fmt::format("plan for {} on {} (method {}): mesh {}\n", report.model_name,
                                 report.cluster, report.method, cluster::ShapeString(best.shape));
  if (report.batch_axis >= 0) {
    text += fmt::format("  batch split   over mesh axis {} only\n", report.batch_axis);
  }
  if (best.pins > 0) text += fmt::format("  pinned        {} instructions\n", best.pins);
  text += fmt::format(
      "  step time     {} (compute {}, collectives in ops {}, resharding {})\n",
      FormatSeconds(estimate.step_seconds()), FormatSeconds(estimate.compute_seconds),
      FormatSeconds(estimate.communication_seconds), FormatSeconds(estimate.resharding_seconds));
  text += fmt::format("  throughput    {:.2f} TFLOPS (dot/convolution FLOPs, all devices)\n",
                      Tflops(report, estimate));
  text += fmt::format("  peak memory   {} per device (budget {})\n",
                      FormatBytes(estimate.peak_memory_bytes),
                      FormatBytes(solution.memory_budget_bytes));
  text += fmt::format("                {}\n", PeakLine(report.peak));
  std::vector<std::string> kinds;
  for (const auto& [kind, count] : estimate.communication.count) {
    kinds.push_back(fmt::format("{} {}", count, cost::CollectiveKindName(kind)));
  }
  text += fmt::format("  collectives   {} ({} in all)\n",
                      kinds.empty() ? "none" : fmt::format("{}", fmt::join(kinds, ", ")),
                      FormatBytes(estimate.communication.bytes));
  text += fmt::format(
      "  compile       {:.2f} s (solver {:.2f} s, {}; {} ILP nodes, {} edges; {} mesh shapes)\n",
      report.total_seconds, solution.timings.solve_s,
      solver::SolveStatusName(solution.answer.status), solution.solver_nodes, solution.solver_edges,
      report.meshes_tried);

  // Parameters in order, then the ten largest other values by per-device bytes.
  Table parameters(
      {"parameter", "shape", "sharding", "per device"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight});
  std::vector<size_t> others;
  for (size_t v = 0; v < solution.graph.nodes.size(); ++v) {
    const ir::Instruction& instruction = *solution.graph.nodes[v].instruction;
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    if (instruction.opcode() != ir::Opcode::kParameter) {
      others.push_back(v);
      continue;
    }
    parameters.AddRow({instruction.name(), instruction.shape().ToString(),
                       ReadableSpecs(chosen.output), FormatBytes(chosen.memory_bytes)});
  }
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    return solution.Chosen(static_cast<int64_t>(a)).memory_bytes >
           solution.Chosen(static_cast<int64_t>(b)).memory_bytes;
  });
  others.resize(std::min<size_t>(others.size(), 10));
  Table largest(
      {"largest values", "shape", "sharding", "strategy"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft});
  for (size_t v : others) {
    const ir::Instruction& instruction = *solution.graph.nodes[v].instruction;
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    largest.AddRow({instruction.name(), instruction.shape().ToString(),
                    ReadableSpecs(chosen.output), chosen.name});
  }
  return text + "\n" + parameters.Render() + "\n" + largest.Render();
}

}  // namespace

CLI::App* AddPlanCommand(CLI::App& app, PlanOptions& options) {
  CLI::App* command = app.add_subcommand(
      "plan", "Plan one training step on a cluster: shard every operator over a device mesh");
  command->add_option("MODEL", options.model_path, "HLO text file (plain or .gz) or zoo name")
      ->required();
  command
      ->add_option("--cluster", options.cluster,
                   "The cluster: PRESET[:HOSTS[xDEVICES]] or FILE.json (`alpa cluster show`)")
      ->required();
  command->add_option("--profile", options.profile_path,
                      "A profile database (alpa profile) whose measured figures replace the "
                      "cluster's analytic device and intra-host link figures");
  command
      ->add_option("--method", options.method,
                   "Parallel method: auto (the default: pipeshard for a zoo model, whose "
                   "candidates include one stage on all devices; shard for an HLO file or with "
                   "--mesh), shard (automatic on --mesh), data (batch split, weights "
                   "replicated), zero2 (and optimizer state split), zero3 (and weights split), "
                   "pipeshard (pipeline stages on sub-meshes, each sharded automatically), "
                   "uniform (Megatron-style: --dp x --op x --pp, or the best of every such grid "
                   "point)")
      ->check(CLI::IsMember({"auto", "shard", "data", "zero2", "zero3", "pipeshard", "uniform"}));
  command->add_option("--mesh", options.mesh,
                      "Logical mesh shape over all devices, e.g. 8, 2x4 or 2x2x2 (default for "
                      "shard: try (N) and every (a, N/a), keep the fastest; the other methods "
                      "use (N))");
  command->add_option("--shardings", options.shardings_path,
                      "Pins: a JSON object from instruction name to XLA sharding text, e.g. "
                      "{\"x\": \"{devices=[4,1]<=[4]}\"} (device ids = mesh positions)");
  command->add_flag("--ignore-hlo-shardings", options.ignore_hlo_shardings,
                    "Do not pin the sharding= attributes of an HLO file");
  command
      ->add_option("--memory-budget", options.memory_budget,
                   "Per-device memory the plan may use, e.g. 12GiB, every method: below the "
                   "device's to leave room for what the memory model does not count (workspaces, "
                   "fragmentation), above it to ask what a larger device allows (default: the "
                   "device memory)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Validator(
          [](const std::string& bytes) {
            return bytes.starts_with('-') || bytes == "0"
                       ? std::string("give a positive size, e.g. 12GiB")
                       : std::string();
          },
          "SIZE"));
  command->add_option("--time-limit", options.time_limit_s, "Solver time limit per mesh (s)")
      ->check(CLI::PositiveNumber);
  command->add_option("--solver", options.solver, "auto, cbc or heuristic")
      ->check(CLI::IsMember({"auto", "cbc", "milp", "heuristic"}));
  command->add_flag("--prefer-reduce-scatter,!--no-prefer-reduce-scatter",
                    options.prefer_reduce_scatter,
                    "Let split contractions leave partial sums so that users may reduce-scatter "
                    "them (default on)");
  command->add_flag("--replicate-unknown-ops", options.replicate_unknown_ops,
                    "Run ops without sharding rules replicated instead of failing");
  command
      ->add_option("--batch-axis", options.batch_axis,
                   "Split the batch dimension of every value over this mesh axis, and no other "
                   "(Alpa's force_batch_dim_to_mesh_dim: the dp axis of a (dp, op) mesh; an axis "
                   "of size 1 keeps the batch whole). Default: 0 for data/zero2/zero3, none for "
                   "shard")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--dump-problem", options.problem_path,
                      "Write the chosen mesh's solver problem here (IOPDDL JSON, `alpa solve` "
                      "reads it)");
  command
      ->add_option("--schedule", options.schedule,
                   "pipeshard: 1f1b, gpipe, interleaved-1f1b (Megatron's, 2 chunks per device "
                   "on the uniform grid's stages), or auto (all, the fastest kept)")
      ->check(CLI::IsMember({"auto", "1f1b", "gpipe", "interleaved-1f1b"}));
  command
      ->add_option("--logical-space", options.logical_space,
                   "pipeshard: logical meshes per sub-mesh, all ((dp, mp) for every mp) or "
                   "single-node (mp up to one host's devices)")
      ->check(CLI::IsMember({"all", "single-node"}));
  command
      ->add_option("--submesh-space", options.submesh_space,
                   "pipeshard: sub-mesh shapes, power-of-two, small-power-of-two or all")
      ->check(CLI::IsMember({"power-of-two", "small-power-of-two", "all"}));
  command
      ->add_option("--imbalance-tolerance", options.imbalance_tolerance,
                   "pipeshard: drop stages whose FLOP share is off their device share by more "
                   "than (1 + T)x (Alpa's stage_imbalance_tolerance; default none)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--manual-stages", options.manual_stages_path,
                      "pipeshard: evaluate the stages of this file (Alpa's ManualStageOption: "
                      "{\"layers\", \"stages\": [{\"layers\", \"submesh\", \"logical_mesh\"}]}) "
                      "instead of searching");
  command->add_flag("--search-micro-batches", options.search_micro_batches,
                    "pipeshard: search the number of micro-batches (1, 2, 4, ... dividing the "
                    "batch) with the stages, keep the fastest plan and list the counts tried "
                    "(the default without --micro-batches)");
  command->add_option("--validate", options.validate_path,
                      "pipeshard: re-cost the stages of this saved plan (alpa plan -o) for MODEL "
                      "on --cluster, and say what no longer fits");
  command->add_option("--report", options.report_path,
                      "pipeshard, uniform: also write the plan as one self-contained HTML page "
                      "(cluster, timeline, memory, shardings, alternatives)");
  command->add_option("--dp", options.dp, "uniform: data-parallel degree of every stage")
      ->check(CLI::PositiveNumber);
  command->add_option("--op", options.op, "uniform: operator-parallel degree of every stage")
      ->check(CLI::PositiveNumber);
  command->add_option("--pp", options.pp, "uniform: number of pipeline stages")
      ->check(CLI::PositiveNumber);
  command->add_flag("--json", options.json, "Print the plan document (JSON)");
  command->add_option("-o,--output", options.output_path, "Also write the plan document here");
  AddZooFlags(*command, options.zoo, /*training=*/true);
  command->footer(
      "Exit codes: 0 success, 1 internal error, 2 bad input (unknown model or cluster, a mesh "
      "that does not tile the devices, an op without sharding rules, a budget no plan fits).");
  return command;
}

// --method auto: the pipeline planner for a zoo model (one stage is among its candidates), the
// single-stage planner for an HLO file or when a single-stage flag is given.
std::string ResolveAutoMethod(const PlanOptions& options) {
  const bool single_stage_flags = !options.mesh.empty() || options.batch_axis ||
                                  !options.shardings_path.empty() || !options.problem_path.empty();
  return IsTrainableModel(options.model_path, options.zoo) && !single_stage_flags ? "pipeshard"
                                                                                  : "shard";
}

int RunPlan(const PlanOptions& flags) {
  PlanOptions options = flags;
  options.zoo.weights_needed = false;  // an imported model's shapes suffice
  if (options.method == "auto") {
    options.method = options.validate_path.empty() ? ResolveAutoMethod(options) : "pipeshard";
  }
  if ((options.dp || options.op || options.pp) && options.method != "uniform") {
    return ReportError(InvalidArgument("--dp, --op and --pp are for --method uniform"));
  }
  if (options.method == "pipeshard" || options.method == "uniform") {
    return RunPipeshardPlan(options);
  }
  for (const auto& [flag, value] : {std::pair{"--report", options.report_path},
                                    std::pair{"--validate", options.validate_path}}) {
    if (!value.empty()) {
      return ReportError(
          InvalidArgument("{} is for pipelined plans (--method pipeshard or "
                          "uniform); --method {} plans one stage",
                          flag, options.method));
    }
  }
  const Clock::time_point start = Clock::now();
  Result<ModelArgument> model = ResolveModel(options.model_path, options.zoo);
  if (!model.ok()) return ReportError(model.status());
  Result<cluster::ClusterSpec> cluster = ProfiledCluster(options.cluster, options.profile_path);
  if (!cluster.ok()) return ReportError(cluster.status());
  const cluster::PhysicalMesh devices = cluster::WholeClusterMesh(*cluster);

  Result<sharding::ParallelMethod> method = sharding::ParseParallelMethod(options.method);
  if (!method.ok()) return ReportError(method.status().WithContext("--method"));
  std::vector<sharding::MethodParameter> parameters;
  if (*method != sharding::ParallelMethod::kShard || model->zoo) {
    Result<std::vector<sharding::MethodParameter>> described = MethodParameters(*model);
    if (!described.ok()) return ReportError(described.status());
    parameters = std::move(described).value();
  }
  const int64_t batch_axis =
      options.batch_axis.value_or(*method == sharding::ParallelMethod::kShard ? -1 : 0);

  api::ParallelizeOptions parallelize;
  parallelize.method = *method;
  parallelize.batch_axis = batch_axis;
  if (!options.mesh.empty()) {
    Result<std::vector<int64_t>> shape = ParseMeshShape(options.mesh);
    if (!shape.ok()) return ReportError(shape.status());
    // api::PlanMeshes refuses these too; here the message names the flags.
    if (*method != sharding::ParallelMethod::kShard &&
        *shape != std::vector<int64_t>{devices.size()}) {
      return ReportError(InvalidArgument(
          "--mesh {}: method {} runs on the 1-D mesh of all {} devices (the batch split over "
          "every device); leave --mesh out, or use --method shard for other meshes",
          options.mesh, options.method, devices.size()));
    }
    if (batch_axis >= static_cast<int64_t>(shape->size())) {
      return ReportError(InvalidArgument("--batch-axis {}: the mesh {} has axes 0 to {}",
                                         batch_axis, cluster::ShapeString(*shape),
                                         shape->size() - 1));
    }
    parallelize.mesh_shape = std::move(shape).value();
  }
  sharding::AutoShardingOptions& auto_options = parallelize.auto_sharding;
  auto_options.strategy.allow_partial_outputs = options.prefer_reduce_scatter;
  auto_options.strategy.replicate_unknown_ops = options.replicate_unknown_ops;
  auto_options.memory_budget_bytes = options.memory_budget;
  Result<solver::SolverKind> kind = solver::ParseSolverKind(options.solver);
  if (!kind.ok()) return ReportError(kind.status().WithContext("--solver"));
  auto_options.solve.kind = *kind;
  auto_options.solve.time_limit_s = options.time_limit_s;

  const ir::Computation& entry = *model->module().entry();
  if (isatty(STDERR_FILENO) && !options.json) {
    fmt::print(stderr, "planning on the mesh shapes of {} devices ...\n", devices.size());
  }
  parallelize.mesh_pins = [&](const std::vector<int64_t>& shape) {
    return UserPins(options, entry, shape);
  };
  Result<api::PlannedMeshes> planned =
      api::PlanMeshes({&model->module(), parameters}, *cluster, parallelize);
  if (!planned.ok()) return ReportError(planned.status());
  const PlannedMesh& best = planned->fastest_first.front();

  PlanReport report;
  report.model_name = model->zoo ? model->zoo->zoo.entry.name : options.model_path;
  report.fingerprint = ModuleFingerprint(model->module());
  report.cluster = options.cluster;
  report.method = options.method;
  report.batch_axis = batch_axis;
  report.num_micro_batches = model->zoo ? model->zoo->training.num_micro_batches : 1;
  Result<cost::FlopCount> flops = cost::CountFlops(entry);
  if (!flops.ok()) return ReportError(flops.status());
  for (ir::Opcode opcode : {ir::Opcode::kDot, ir::Opcode::kConvolution}) {
    if (auto it = flops->by_opcode.find(opcode); it != flops->by_opcode.end()) {
      report.dot_flops += it->second;
    }
  }
  report.meshes_tried = planned->shapes_tried;
  std::vector<cost::ParameterRole> roles;
  for (const sharding::MethodParameter& parameter : parameters) roles.push_back(parameter.role);
  report.peak = PeakJson(
      sharding::SolutionMemoryModel(entry, best.solution, roles, report.num_micro_batches));
  report.total_seconds = SecondsSince(start);

  if (!options.problem_path.empty()) {
    const Status written = WriteTextFile(
        options.problem_path, solver::IopddlJson(best.solution.problem), "--dump-problem");
    if (!written.ok()) return ReportError(written);
  }
  return EmitDocument(PlanJson(report, best), PlanText(report, best), options.output_path,
                      options.json);
}

}  // namespace alpa::tools
