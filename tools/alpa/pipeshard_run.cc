#include "tools/alpa/pipeshard_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/pipeshard_executable.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "plan/pipeline_search.h"
#include "plan/pipeshard_document.h"
#include "runtime/execution_trace.h"
#include "runtime/profiler.h"
#include "support/file.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/elastic_run.h"
#include "tools/alpa/profile_command.h"
#include "tools/alpa/training_check.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

using Clock = std::chrono::steady_clock;

class PipelineRunner final : public StepRunner {
 public:
  PipelineRunner(api::PipeshardExecutable& executable, std::optional<Clock::time_point> epoch)
      : executable_(executable), epoch_(epoch) {}
  Status Place(std::vector<ir::Literal> carried) override { return executable_.Place(carried); }
  Result<double> Step(std::vector<ir::Literal> batch) override {
    return executable_.Step(batch, epoch_);
  }
  Result<std::vector<ir::Literal>> Fetch() override { return executable_.Fetch(); }

 private:
  api::PipeshardExecutable& executable_;
  std::optional<Clock::time_point> epoch_;
};


// What the devices of a step measured, against the plan.
struct Measured {
  std::vector<int64_t> stage_peak;         // by device group: the largest of its devices' peaks
  std::vector<std::string> stage_peak_at;  // and where that device reached it
  double bubble_fraction = 0;
};

// The bubble of the last step as the simulator counts it (pipeline/simulator.h), over the device
// groups:
//   1 - sum over groups of the busy time of its first device / (groups x the step's time)
double BubbleFraction(const api::PipeshardExecutable& exe, const plan::PipeshardPlan& plan,
                      double step_s) {
  const size_t groups = plan.stages.size() / static_cast<size_t>(plan.num_chunks);
  double busy = 0;
  for (size_t g = 0; g < groups; ++g) {
    busy += exe.last_run()[static_cast<size_t>(plan.stages[g].devices[0])].busy_s;
  }
  return 1 - busy / (static_cast<double>(groups) * step_s);
}

// Each stage's peak over its devices in the last step; the bubble, the median of the steps'.
Measured Measure(const api::PipeshardExecutable& exe, const plan::PipeshardPlan& plan,
                 std::vector<double> bubbles) {
  Measured measured;
  const size_t groups = plan.stages.size() / static_cast<size_t>(plan.num_chunks);
  for (size_t g = 0; g < groups; ++g) {
    int64_t peak = 0;
    std::string at;
    for (int64_t device : plan.stages[g].devices) {
      const runtime::PipelineProfile& profile = exe.last_run()[static_cast<size_t>(device)];
      if (profile.peak_bytes > peak) {
        peak = profile.peak_bytes;
        at = fmt::format("device {}, {}", device, profile.peak_label);
      }
    }
    measured.stage_peak.push_back(peak);
    measured.stage_peak_at.push_back(at);
  }
  measured.bubble_fraction = runtime::Median(std::move(bubbles));
  return measured;
}

std::string StageMesh(const plan::LayerCostTable& table, const plan::PlannedStage& stage) {
  return plan::MeshConfigName(table.configs[static_cast<size_t>(stage.choice.config)]);
}

void PrintPlan(const ZooStep& zoo, const ClusterRunOptions& options,
               const plan::PipelineSearch& search, const api::PipeshardExecutable& exe,
               double compile_s, uint64_t seed, const std::string& resumed) {
  const plan::PipeshardPlan& plan = search.plan;
  fmt::print("training {} ({}) on {} {} ({}), seed {}\n", zoo.zoo.entry.name,
             zoo.zoo.entry.description, exe.device_count(),
             options.backend == "mpi" ? "MPI ranks" : "in-process devices", options.cluster, seed);
  fmt::print("config      {}; {} weights\n", DescribeConfig(zoo), zoo.weight_elements);
  fmt::print(
      "plan        pipeshard: {} stages{}, {} micro-batches under {}, planned and "
      "compiled in {}\n",
      plan.stages.size(),
      plan.num_chunks > 1 ? fmt::format(" ({} chunks per device)", plan.num_chunks) : "",
      plan.num_micro_batches, pipeline::ScheduleKindName(plan.schedule), FormatSeconds(compile_s));
  Table table(
      {"stage", "layers", "devices", "mesh", "fwd/mb", "bwd/mb", "update", "peak (pred)"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft,
       Table::Align::kRight, Table::Align::kRight, Table::Align::kRight, Table::Align::kRight});
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const plan::PlannedStage& stage = plan.stages[s];
    table.AddRow({std::to_string(s),
                  fmt::format("{}..{}", stage.choice.first_layer, stage.choice.last_layer),
                  fmt::format("{}", fmt::join(stage.devices, ",")), StageMesh(search.table, stage),
                  FormatSeconds(stage.forward_s), FormatSeconds(stage.backward_s),
                  FormatSeconds(stage.update_s), FormatBytes(stage.peak_memory_bytes)});
  }
  fmt::print("{}", table.Render(12));
  fmt::print(
      "predicted   {} per step (simulated; Alpa's formula {}), bubble {:.2f}, {} between "
      "sub-meshes per step{}\n",
      FormatSeconds(plan.step_time_s), FormatSeconds(plan.alpa_formula_s), plan.bubble_fraction,
      FormatBytes(plan.transfer_bytes_per_step),
      plan.gather_bytes_per_step > 0 ? fmt::format(", then {} all-gathered inside receiving meshes",
                                                   FormatBytes(plan.gather_bytes_per_step))
                                     : "");
  fmt::print("transfers   {} between sub-meshes per step as compiled{}\n",
             FormatBytes(exe.between_meshes_bytes()),
             exe.cross_mesh_bytes() > exe.between_meshes_bytes()
                 ? fmt::format(", then {} all-gathered inside receiving meshes",
                               FormatBytes(exe.cross_mesh_bytes() - exe.between_meshes_bytes()))
                 : "");
  if (options.check) {
    fmt::print(
        "check       against the reference interpreter on one device, each step from the "
        "devices' inputs\n");
  }
  if (!resumed.empty()) fmt::print("{}\n", resumed);
  PrintStepHeader(options.check);
}

void PrintSummary(const std::vector<StepRecord>& records, const plan::PipeshardPlan& plan,
                  const api::PipeshardExecutable& exe, const Measured& measured, double step_s) {
  fmt::print(
      "\nloss {} -> {} in {} steps; step time {} measured (median of the steps after the "
      "first), {} simulated ({:.2f}x)\n",
      FormatLoss(records.front().loss), FormatLoss(records.back().loss), records.size(),
      FormatSeconds(step_s), FormatSeconds(plan.step_time_s), step_s / plan.step_time_s);
  fmt::print("bubble {:.2f} measured (median of the same steps), {:.2f} simulated\n",
             measured.bubble_fraction, plan.bubble_fraction);
  for (size_t g = 0; g < measured.stage_peak.size(); ++g) {
    const auto peak = static_cast<double>(measured.stage_peak[g]);
    const int64_t compiled = exe.compiled_memory().devices[g].peak_bytes;
    const int64_t planned = plan.stages[g].peak_memory_bytes;
    fmt::print(
        "memory stage {}: {} per device at peak measured ({}); predicted {} as compiled "
        "({:.2f}x), {} as planned ({:.2f}x)\n",
        g, FormatBytes(measured.stage_peak[g]), measured.stage_peak_at[g], FormatBytes(compiled),
        peak / static_cast<double>(compiled), FormatBytes(planned),
        peak / static_cast<double>(planned));
  }
}

nlohmann::ordered_json ToJson(const std::vector<StepRecord>& records,
                              const plan::PipelineSearch& search,
                              const api::PipeshardExecutable& exe, const Measured& measured,
                              double step_s, const TrainingCheck* check) {
  const plan::PipeshardPlan& plan = search.plan;
  nlohmann::ordered_json steps = StepRecordsJson(records, check != nullptr);
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const plan::PlannedStage& stage = plan.stages[s];
    const size_t group = s % measured.stage_peak.size();
    stages.push_back(
        {{"layers", {stage.choice.first_layer, stage.choice.last_layer}},
         {"devices", stage.devices},
         {"mesh_config", StageMesh(search.table, stage)},
         {"predicted_peak_memory_bytes", stage.peak_memory_bytes},
         {"compiled_peak_memory_bytes", exe.compiled_memory().devices[group].peak_bytes},
         {"measured_peak_memory_bytes", measured.stage_peak[group]},
         {"measured_peak_at", measured.stage_peak_at[group]},
         {"predicted_memory", plan::StageMemoryJson(stage)}});
  }
  nlohmann::ordered_json summary = {
      {"method", "pipeshard"},
      {"schedule", pipeline::ScheduleKindName(plan.schedule)},
      {"num_micro_batches", plan.num_micro_batches},
      {"num_chunks", plan.num_chunks},
      {"devices", exe.device_count()},
      {"stages", std::move(stages)},
      {"predicted_step_time_s", plan.step_time_s},
      {"measured_step_time_s", step_s},
      {"predicted_bubble_fraction", plan.bubble_fraction},
      {"measured_bubble_fraction", measured.bubble_fraction},
      {"cross_mesh_bytes_per_step", exe.cross_mesh_bytes()},
      {"between_meshes_bytes_per_step", exe.between_meshes_bytes()},
      {"priced_transfer_bytes_per_step", plan.transfer_bytes_per_step},
      {"within_receivers_bytes_per_step", exe.cross_mesh_bytes() - exe.between_meshes_bytes()},
      {"priced_gather_bytes_per_step", plan.gather_bytes_per_step}};
  nlohmann::ordered_json json = {{"steps", std::move(steps)}, {"summary", std::move(summary)}};
  if (check != nullptr) json["check"] = check->Json();
  return json;
}

Result<plan::PipelineSearch> Search(const ZooStep& zoo, const ClusterRunOptions& options,
                                    const cluster::ClusterSpec& cluster,
                                    const std::optional<plan::ManualStages>& saved) {
  plan::PipelineSearchOptions search;
  search.planner.schedules = *pipeline::ParseSchedules(options.schedule);  // the flag is checked
  search.manual = saved;
  if (!options.manual_stages.empty()) {
    ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(options.manual_stages));
    ALPA_ASSIGN_OR_RETURN(search.manual, plan::ParseManualStages(text, options.manual_stages));
  }
  const models::Model& model = zoo.zoo.model;
  Result<plan::PipelineSearch> found =
      plan::SearchPipeline(*model.loss, model.weights, zoo.training, cluster, search);
  if (!found.ok() && !options.manual_stages.empty()) {
    return found.status().WithContext(options.manual_stages);
  }
  return found;
}

}  // namespace

int RunPipeshardOnCluster(const ZooStep& zoo, const ZooStep* f32_step,
                          const ClusterRunOptions& options,
                          const std::optional<plan::ManualStages>& saved, const TrainingRun& run) {
  const auto& [steps, seed, json, checkpoints, progress_file] = run;
  const Clock::time_point start = Clock::now();
  Result<std::unique_ptr<runtime::MpiWorld>> backend = StartBackend(options);
  if (!backend.ok()) return ReportError(backend.status().WithContext("--backend"));
  runtime::MpiWorld* mpi = backend->get();
  const RunRanks ranks(mpi);
  const bool speaker = ranks.speaker();
  auto fail = [&](const Status& status) { return ranks.Fail(status); };
  auto fail_step = [&](const Status& error) { return ranks.FailStep(error, zoo.zoo.entry.name); };
  if (mpi != nullptr && checkpoints.any()) {
    return fail(Unimplemented(
        "checkpoints of pipelined plans are saved in-process only for now; drop --backend mpi"));
  }
  Result<cluster::ClusterSpec> cluster = ProfiledCluster(options.cluster, options.profile);
  if (!cluster.ok()) return fail(cluster.status());
  Result<plan::PipelineSearch> search = Search(zoo, options, *cluster, saved);
  if (!search.ok()) return fail(search.status().WithContext(zoo.zoo.entry.name));
  api::PipeshardRunOptions run_options;
  // A device past its memory fails the step naming the buffer, as it would on the real device.
  for (const plan::PlannedStage& stage : search->plan.stages) {
    if (run_options.memory_limit_bytes == 0 ||
        stage.memory_bytes < run_options.memory_limit_bytes) {
      run_options.memory_limit_bytes = stage.memory_bytes;
    }
  }
  run_options.kernels = options.kernels == "reference" ? runtime::KernelChoice::kReference
                                                       : runtime::KernelChoice::kFast;
  Result<api::PipeshardExecutable> exe =
      api::ParallelizePipeshard({zoo.zoo.model.loss.get(), zoo.zoo.model.weights, zoo.training},
                                *cluster, search->plan, search->table.configs, run_options);
  if (!exe.ok()) return fail(exe.status().WithContext(zoo.zoo.entry.name));
  if (mpi != nullptr) {
    const Status bound = exe->BindProcess(mpi->communicator(), mpi->mailbox());
    if (!bound.ok()) return fail(bound.WithContext(zoo.zoo.entry.name));
  }
  const double compile_s = std::chrono::duration<double>(Clock::now() - start).count();
  const Clock::time_point epoch = Clock::now();
  std::optional<runtime::ExecutionTrace> trace;
  if (!options.trace.empty()) trace.emplace(exe->device_count());
  ZooTraining training(
      zoo, seed,
      std::make_unique<PipelineRunner>(*exe, trace ? std::optional(epoch) : std::nullopt));
  Result<Resumed> resumed = ResumeFromFlags(training, checkpoints);
  if (!resumed.ok()) return fail_step(resumed.status());
  const int64_t first = resumed->first_step;
  if (speaker && !json) PrintPlan(zoo, options, *search, *exe, compile_s, seed, resumed->note);
  if (const Status together = ranks.StartTogether(); !together.ok()) return fail_step(together);
  ProgressLog progress(speaker ? progress_file : "");
  progress.Start("pipeshard", fmt::format("{} stages", search->plan.stages.size()),
                 exe->device_count(), first);
  std::optional<TrainingCheck> check;
  if (options.check && speaker) check.emplace(zoo, f32_step, seed);
  // --check's inputs of the next step: the devices' carried values, fetched once a step (on every
  // MPI rank, as fetching is collective there).
  std::vector<ir::Literal> inputs;
  auto fetch = [&]() -> Status {
    ALPA_ASSIGN_OR_RETURN(inputs, training.Carried());
    return Status::Ok();
  };
  if (options.check) {
    const Status fetched = fetch();
    if (!fetched.ok()) return fail_step(fetched);
  }
  std::vector<StepRecord> records;
  std::vector<double> bubbles;  // of the steps after the first, as the step time
  for (int64_t i = first; i < first + steps; ++i) {
    StepRecord record{.step = i + 1};
    if (check) {
      const Status followed = check->Follow(inputs);
      if (!followed.ok()) return fail_step(followed);
    }
    const double start_s = std::chrono::duration<double>(Clock::now() - epoch).count();
    Result<double> loss = training.Step(i, record.seconds);
    if (!loss.ok()) return fail_step(loss.status());
    record.loss = *loss;
    if (i > first || steps == 1)
      bubbles.push_back(BubbleFraction(*exe, search->plan, record.seconds));
    for (size_t d = 0; d < exe->last_run().size(); ++d) {
      const runtime::PipelineProfile& device = exe->last_run()[d];
      record.peak_memory_bytes = std::max(record.peak_memory_bytes, device.peak_bytes);
      if (trace) trace->AddTasks(static_cast<int64_t>(d), device.events);
    }
    if (trace) trace->AddSpan({fmt::format("step {}", record.step), start_s, record.seconds});
    if (options.check) {
      const Status fetched = fetch();
      if (!fetched.ok()) return fail_step(fetched);
    }
    if (check) {
      Result<double> want = check->Compare(i, record.loss, inputs);
      if (!want.ok()) return fail_step(want.status());
      record.reference_loss = *want;
    }
    records.push_back(record);
    if (speaker && !json) PrintStepRow(record, check.has_value());
    const Status checkpointed = CheckpointIfDue(training, checkpoints, "pipeshard", record.step,
                                                first + steps, speaker && !json);
    if (!checkpointed.ok()) return fail_step(checkpointed);
    progress.Step(record.step);
  }
  if (!speaker) return kExitOk;
  const double step_s = MeasuredStepSeconds(records);
  const Measured measured = Measure(*exe, search->plan, std::move(bubbles));
  if (json) {
    fmt::print("{}\n", DumpJson(ToJson(records, *search, *exe, measured, step_s,
                                       check ? &*check : nullptr)));
  } else {
    PrintSummary(records, search->plan, *exe, measured, step_s);
    if (check) fmt::print("{}\n", check->Text());
  }
  if (trace) {
    const Status written = trace->Write(options.trace);
    if (!written.ok()) return ReportError(written.WithContext("--trace"));
    if (!json) fmt::print("trace  {} (open in ui.perfetto.dev)\n", options.trace);
  }
  return check && !check->passed() ? kExitCheckFailed : kExitOk;
}

}  // namespace alpa::tools
