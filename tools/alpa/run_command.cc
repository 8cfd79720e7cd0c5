#include "tools/alpa/run_command.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/dumped_step_run.h"
#include "tools/alpa/elastic_run.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

// A model with a loss (the zoo's, an ONNX export, an HLO loss with --weights).
Result<ZooStep> ResolveRunModel(const RunOptions& options) {
  if (options.steps < 1) {
    return InvalidArgument("--steps {}: it must be at least 1", options.steps);
  }
  if (!options.scalars.empty()) {
    return InvalidArgument(
        "--scalar is for a dumped train step's scalar parameters; {} is a "
        "model with a loss, whose train step we build",
        options.model);
  }
  if (!IsTrainableModel(options.model, options.zoo)) return UnknownModel(options.model);
  return BuildZooStep(options.model, options.zoo);
}

bool IsDumpedTrainStep(const RunOptions& options) {
  std::error_code ignored;
  return !IsTrainableModel(options.model, options.zoo) &&
         std::filesystem::exists(options.model, ignored);
}

void PrintHeader(const ZooStep& zoo, const RunOptions& options, const std::string& resumed) {
  fmt::print("training {} ({}) in the reference interpreter, seed {}\n", zoo.zoo.entry.name,
             zoo.zoo.entry.description, options.seed);
  fmt::print("config   {}; {} weights\n", DescribeConfig(zoo), zoo.weight_elements);
  if (!resumed.empty()) fmt::print("{}\n", resumed);
  fmt::print("\n");
  fmt::print("{:>6}  {:>12}  {:>9}\n", "step", "loss", "time");
  fmt::print("{:>6}  {:>12}  {:>9}\n", "------", "------------", "---------");
  std::fflush(stdout);
}

void PrintStep(const StepRecord& record) {
  fmt::print("{:>6}  {:>12}  {:>9}\n", record.step, FormatLoss(record.loss),
             FormatSeconds(record.seconds));
  std::fflush(stdout);
}

void PrintFooter(const std::vector<StepRecord>& records) {
  double seconds = 0;
  for (const StepRecord& record : records) seconds += record.seconds;
  fmt::print("\nloss {} -> {} in {} steps ({} in the interpreter)\n",
             FormatLoss(records.front().loss), FormatLoss(records.back().loss), records.size(),
             FormatSeconds(seconds));
}

nlohmann::ordered_json ToJson(const std::vector<StepRecord>& records) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const StepRecord& record : records) {
    json.push_back({{"step", record.step}, {"loss", record.loss}, {"time_s", record.seconds}});
  }
  return json;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunOptions& options) {
  CLI::App* command = app.add_subcommand(
      "run",
      "Train a model on one device (the reference interpreter) or a cluster's, on synthetic data "
      "or --batch-file, and print the loss of each step");
  command
      ->add_option("MODEL", options.model,
                   "A model of the zoo (`alpa zoo` lists them), an ONNX file, an HLO loss with "
                   "--weights, or an HLO file of a whole train step")
      ->required();
  command->add_option("--steps", options.steps, "Training steps to run")->capture_default_str();
  command
      ->add_option("--seed", options.seed,
                   "Seed of the initial weights; step i's batch is drawn from seed + i")
      ->capture_default_str()
      ->check(SeedValidator());
  command->add_flag(
      "--json", options.json,
      "Print a JSON list of {\"step\", \"loss\", \"time_s\"} at the end instead (with "
      "--cluster: {\"steps\", \"summary\", \"check\"}, each step with its measured "
      "\"peak_memory_bytes\")");
  CLI::Option* cluster =
      command->add_option("--cluster", options.cluster.cluster,
                          "Plan the step for this cluster (local:N, a preset or a JSON file) and "
                          "train on as many in-process devices, one thread each");
  command
      ->add_option("--method", options.cluster.method,
                   "With --cluster: shard (auto-sharding), data, zero2, zero3, or pipeshard "
                   "(pipeline stages on sub-meshes, auto-sharded inside each)")
      ->capture_default_str()
      ->needs(cluster);
  command
      ->add_option("--schedule", options.cluster.schedule,
                   "With --method pipeshard: gpipe, 1f1b, interleaved-1f1b or auto (the "
                   "planner's choice among them)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gpipe", "1f1b", "interleaved-1f1b"}))
      ->needs(cluster);
  command
      ->add_option("--manual-stages", options.cluster.manual_stages,
                   "With --method pipeshard: run these stages (Alpa's ManualStageOption, format "
                   "in src/plan/manual_stages.h) in place of the planner's")
      ->needs(cluster);
  command
      ->add_option("--profile", options.cluster.profile,
                   "With --method pipeshard: plan and predict on this machine's figures "
                   "measured by alpa profile, in place of the preset's")
      ->check(CLI::ExistingFile)
      ->needs(cluster);
  command
      ->add_option("--mesh", options.cluster.mesh,
                   "With --cluster: the logical mesh, e.g. 2x2 (default: the planner picks)")
      ->needs(cluster);
  command
      ->add_option("--batch-axis", options.cluster.batch_axis,
                   "With --cluster --method shard: split the batch along this mesh axis")
      ->needs(cluster);
  command
      ->add_flag("--check", options.cluster.check,
                 "With --cluster: train the reference interpreter alongside on one device and "
                 "fail (exit 3) if a loss, weight or optimizer state differs beyond the printed "
                 "tolerance")
      ->needs(cluster);
  command
      ->add_option("--trace", options.cluster.trace,
                   "With --cluster: write every device's kernels and collectives of every step "
                   "to this Chrome trace (open in chrome://tracing or ui.perfetto.dev)")
      ->needs(cluster);
  command
      ->add_option("--plan", options.cluster.plan,
                   "With --cluster: run this saved plan (alpa plan ... -o plan.json) instead of "
                   "planning afresh; it must be for this model, config and cluster")
      ->needs(cluster)
      ->excludes("--method", "--mesh", "--batch-axis");
  command
      ->add_option("--backend", options.cluster.backend,
                   "With --cluster: in-process (devices are threads) or mpi (each process of "
                   "mpirun -np N is one device; rank 0 prints)")
      ->capture_default_str()
      ->check(CLI::IsMember({"in-process", "mpi"}))
      ->needs(cluster);
  command
      ->add_option("--kernels", options.cluster.kernels,
                   "With --cluster: fast (the kernels layer: vectorised, multithreaded) or "
                   "reference (every instruction in the interpreter's handlers, for comparison)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fast", "reference"}))
      ->needs(cluster);
  command->add_option("--scalar", options.scalars,
                      "A dumped train step's scalar parameter (a learning rate, a step count) as "
                      "NAME=VALUE; repeat for each");
  command->add_option(
      "--batch-file", options.zoo.batch_file,
      "Train on these arrays (.npy, .npz or .safetensors; one per batch parameter, named after "
      "it, its rows k steps' batches stacked) in place of synthetic batches: step i of seed S "
      "reads batch (S + i) mod k");
  AddCheckpointFlags(*command, options.checkpoints);
  command
      ->add_flag("--elastic", options.elastic,
                 "With --cluster and --checkpoint-dir: supervise the run (start alpa by itself; "
                 "with --backend mpi it launches mpirun) and when a device or rank is lost, "
                 "re-plan for the devices left and resume from the last checkpoint")
      ->needs(cluster);
  command->add_option("--progress-file", options.progress_file)->group("");
  AddZooFlags(*command, options.zoo, /*training=*/true);
  command->footer(
      "Synthetic data has a pattern the model can learn, so the loss falls; the same seed gives "
      "the same losses. time_s is the interpreter's time for the step.\n"
      "Exit codes: 0 success, 1 internal error, 2 bad input (unknown model, impossible config, bad "
      "flag, or a loss that became NaN or infinite: try a lower --lr), 3 --check found a "
      "difference beyond its tolerance.");
  return command;
}

int RunRun(const RunOptions& options) {
  if (options.elastic) return RunElastic(options, options.arguments);
  if (IsDumpedTrainStep(options)) return RunDumpedStep(options);
  Result<ZooStep> zoo = ResolveRunModel(options);
  if (!zoo.ok()) return ReportError(zoo.status());
  KeepFreedMemoryForReuse();
  if (!options.cluster.cluster.empty()) {
    std::optional<ZooStep> f32_step;
    if (options.cluster.check && zoo->dtype != ir::DType::kF32) {
      ZooFlags f32_flags = options.zoo;
      f32_flags.dtype = "f32";
      Result<ZooStep> built = BuildZooStep(options.model, f32_flags);
      if (!built.ok()) return ReportError(built.status().WithContext("--check's f32 reference"));
      f32_step = std::move(built).value();
    }
    return RunOnCluster(
        *zoo, f32_step ? &*f32_step : nullptr, options.cluster,
        {options.steps, options.seed, options.json, options.checkpoints, options.progress_file});
  }
  ZooTraining training(*zoo, options.seed);
  Result<Resumed> resumed = ResumeFromFlags(training, options.checkpoints);
  if (!resumed.ok()) return ReportError(resumed.status().WithContext(options.model));
  const int64_t first = resumed->first_step;
  if (!options.json) PrintHeader(*zoo, options, resumed->note);
  ProgressLog progress(options.progress_file);
  progress.Start("interpreter", "[1]", 1, first);
  std::vector<StepRecord> records;
  for (int64_t i = first; i < first + options.steps; ++i) {
    StepRecord record{.step = i + 1};
    Result<double> loss = training.Step(i, record.seconds);
    if (!loss.ok()) return ReportError(loss.status().WithContext(options.model));
    record.loss = *loss;
    if (!std::isfinite(record.loss)) {
      return ReportError(InvalidArgument(
          "{}: the loss of step {} is {}: training diverged; try a lower learning rate (--lr, now "
          "{:g})",
          options.model, record.step, record.loss, zoo->training.optimizer.learning_rate));
    }
    records.push_back(record);
    if (!options.json) PrintStep(record);
    const Status checkpointed = CheckpointIfDue(training, options.checkpoints, "interpreter",
                                                record.step, first + options.steps, !options.json);
    if (!checkpointed.ok()) return ReportError(checkpointed.WithContext(options.model));
    progress.Step(record.step);
  }
  if (options.json) {
    fmt::print("{}\n", DumpJson(ToJson(records)));
  } else {
    PrintFooter(records);
  }
  return kExitOk;
}

}  // namespace alpa::tools
