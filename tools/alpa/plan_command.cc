#include "tools/alpa/plan_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "api/dumped_train_step.h"
#include "api/parallelize.h"
#include "api/single_stage_document.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "sharding/auto_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/pins.h"
#include "solver/iopddl_json.h"
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
// step, and an HLO file without any has none under `shard` (api/dumped_train_step.h).
Result<std::vector<sharding::MethodParameter>> MethodParameters(const ModelArgument& model,
                                                                sharding::ParallelMethod method) {
  if (!model.zoo) {
    ALPA_ASSIGN_OR_RETURN(api::TrainStep step, api::DescribeDumpedStepFor(model.module(), method));
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
  Result<std::vector<sharding::MethodParameter>> described = MethodParameters(*model, *method);
  if (!described.ok()) return ReportError(described.status());
  const std::vector<sharding::MethodParameter> parameters = std::move(described).value();
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

  Result<api::SingleStageReport> report =
      api::ReportOfSingleStagePlan({&model->module(), parameters}, best.solution,
                                   model->zoo ? model->zoo->training.num_micro_batches : 1);
  if (!report.ok()) return ReportError(report.status());
  report->model_name = model->zoo ? model->zoo->zoo.entry.name : options.model_path;
  report->cluster = options.cluster;
  report->method = options.method;
  report->batch_axis = batch_axis;
  report->meshes_tried = planned->shapes_tried;
  report->pins = best.pins;
  report->total_seconds = SecondsSince(start);

  if (!options.problem_path.empty()) {
    const Status written = WriteTextFile(
        options.problem_path, solver::IopddlJson(best.solution.problem), "--dump-problem");
    if (!written.ok()) return ReportError(written);
  }
  return EmitDocument(api::SingleStagePlanJson(*report, best.shape, best.solution),
                      api::SingleStagePlanText(*report, best.shape, best.solution),
                      options.output_path, options.json);
}

}  // namespace alpa::tools
