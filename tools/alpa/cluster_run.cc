#include "tools/alpa/cluster_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <vector>

#include "api/parallelize.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "kernels/elementwise.h"
#include "plan/plan_document.h"
#include "runtime/execution_trace.h"
#include "runtime/mpi_communicator.h"
#include "runtime/profiler.h"
#include "spmd/collective_stats.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/elastic_run.h"
#include "tools/alpa/pipeshard_run.h"
#include "tools/alpa/training_check.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

// What MeasuredStepSeconds took: "median of steps 2 to 10; the first took 28.5 ms".
std::string MeasuredStepNote(const std::vector<StepRecord>& records) {
  if (records.size() < 2) return "one step";
  const std::string warm = records.size() == 2 ? fmt::format("step {}", records[1].step)
                                               : fmt::format("median of steps {} to {}",
                                                             records[1].step, records.back().step);
  return fmt::format("{}; the first took {}", warm, FormatSeconds(records.front().seconds));
}

// The largest per-device peak of the run: where and when it was reached.
struct MeasuredPeak {
  int64_t bytes = 0;
  int64_t device = 0;
  std::string instruction;

  void Update(const std::vector<runtime::ExecutionProfile>& devices) {
    for (size_t d = 0; d < devices.size(); ++d) {
      if (devices[d].peak_bytes <= bytes) continue;
      bytes = devices[d].peak_bytes;
      device = static_cast<int64_t>(d);
      const ir::Instruction* at = devices[d].peak_instruction;
      instruction = at != nullptr ? "%" + at->name() : "its arguments";
    }
  }
};

// A training's runner on the executable's devices: the carried values stay there between steps
// (api::DeviceState), the batch goes in and the loss comes out. Under MPI (a communicator) each
// process holds its own device's tiles, and Fetch is collective: every rank must call it.
class DeviceRunner final : public StepRunner {
 public:
  DeviceRunner(api::ParallelExecutable& executable, runtime::Communicator* communicator,
               std::optional<std::chrono::steady_clock::time_point> trace_epoch)
      : executable_(executable), communicator_(communicator), trace_epoch_(trace_epoch) {}

  Status Place(std::vector<ir::Literal> carried) override {
    ALPA_ASSIGN_OR_RETURN(state_, executable_.Place(carried, communicator_));
    return Status::Ok();
  }

  Result<double> Step(std::vector<ir::Literal> batch) override {
    ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> results,
                          executable_.Step(state_, batch, communicator_, trace_epoch_));
    return results.front().GetDouble(0);  // the loss: the one result not carried
  }

  Result<std::vector<ir::Literal>> Fetch() override {
    return executable_.Fetch(state_, communicator_);
  }

  // Each device saves its own tiles; a restore reads each device's tiles of this plan.
  Result<std::string> Save(const ir::Module&, const api::CheckpointTarget& target) override {
    return api::SaveCheckpoint(api::CarriedLayoutOf(executable_), state_.first_device(),
                               state_.tiles(), target, communicator_);
  }

  Result<api::RestoredState> Restore(const ir::Module&, const std::string& path,
                                     const std::string& model) override {
    ALPA_ASSIGN_OR_RETURN(
        api::RestoredState restored,
        api::RestoreCheckpoint(api::CarriedLayoutOf(executable_), path, model, communicator_));
    ALPA_ASSIGN_OR_RETURN(state_, executable_.Adopt(std::move(restored.tiles), communicator_));
    restored.tiles.clear();
    return restored;
  }

 private:
  api::ParallelExecutable& executable_;
  runtime::Communicator* communicator_;
  std::optional<std::chrono::steady_clock::time_point> trace_epoch_;
  api::DeviceState state_;
};

double SecondsSince(std::chrono::steady_clock::time_point epoch) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch).count();
}

void PrintHeader(const ZooStep& zoo, const ClusterRunOptions& options,
                 const api::ParallelExecutable& executable, uint64_t seed,
                 const plan::document::SavedPlan* saved, const std::string& resumed) {
  const sharding::ShardingEstimate& estimate = executable.estimate();
  fmt::print("training {} ({}) on {} {} ({}), seed {}\n", zoo.zoo.entry.name,
             zoo.zoo.entry.description, executable.device_count(),
             options.backend == "mpi" ? "MPI ranks" : "in-process devices", options.cluster, seed);
  fmt::print("config      {}; {} weights\n", DescribeConfig(zoo), zoo.weight_elements);
  fmt::print("plan        method {}, mesh {}, planned and partitioned in {}\n", options.method,
             cluster::ShapeString(executable.mesh_shape()),
             FormatSeconds(executable.compile_time_s()));
  if (saved != nullptr) {
    fmt::print("saved plan  {}: {} strategies pinned, {} per step when saved\n", options.plan,
               saved->strategies.size(), FormatSeconds(saved->step_time_s));
  }
  fmt::print("predicted   {} per step on {}'s figures, {} per device at peak\n",
             FormatSeconds(estimate.step_seconds()), options.cluster,
             FormatBytes(estimate.peak_memory_bytes));
  fmt::print("collectives {} per step (as priced)\n", spmd::ToString(executable.comm_stats()));
  for (const std::string& passed : executable.passed_over()) {
    fmt::print(
        "note        a faster plan was passed over, as the partitioner cannot lower it "
        "yet: {}\n",
        passed);
  }
  if (options.check) {
    fmt::print(
        "check       against the reference interpreter on one device, each step from the "
        "devices' inputs{}\n",
        zoo.dtype == ir::DType::kF32
            ? ""
            : fmt::format("; again in f32, for how far {} rounding moves each value",
                          ir::DTypeName(zoo.dtype)));
  }
  if (!resumed.empty()) fmt::print("{}\n", resumed);
  PrintStepHeader(options.check);
}

nlohmann::ordered_json ToJson(const std::vector<StepRecord>& records,
                              const api::ParallelExecutable& executable, const MeasuredPeak& peak,
                              const ClusterRunOptions& options, const TrainingCheck* check) {
  nlohmann::ordered_json steps = StepRecordsJson(records, check != nullptr);
  nlohmann::ordered_json summary = {
      {"cluster", options.cluster},
      {"method", options.method},
      {"mesh", executable.mesh_shape()},
      {"devices", executable.device_count()},
      {"compile_time_s", executable.compile_time_s()},
      {"predicted_step_time_s", executable.estimate().step_seconds()},
      {"measured_step_time_s", MeasuredStepSeconds(records)},
      {"predicted_peak_memory_bytes", executable.estimate().peak_memory_bytes},
      {"measured_peak_memory_bytes", peak.bytes},
      {"measured_peak_device", peak.device},
      {"measured_peak_at", peak.instruction},
      {"collectives_per_step", spmd::ToString(executable.comm_stats())},
      {"passed_over", executable.passed_over()}};
  nlohmann::ordered_json json = {{"steps", std::move(steps)}, {"summary", std::move(summary)}};
  if (check != nullptr) json["check"] = check->Json();
  return json;
}

Result<api::ParallelExecutable> PlanRun(const ZooStep& zoo, const ClusterRunOptions& options,
                                        const std::map<std::string, std::string>& strategies) {
  ALPA_ASSIGN_OR_RETURN(cluster::ClusterSpec cluster,
                        cluster::ParseClusterArgument(options.cluster));
  ALPA_ASSIGN_OR_RETURN(api::ParallelizeOptions parallelize, ParallelizeOptionsOf(options));
  parallelize.auto_sharding.pinned_strategies = strategies;
  ALPA_ASSIGN_OR_RETURN(api::TrainStep step, api::DescribeTrainStep(*zoo.step, StepLayout(zoo)));
  return api::Parallelize(step, cluster, parallelize);
}

void PrintSummary(const std::vector<StepRecord>& records, const api::ParallelExecutable& executable,
                  const MeasuredPeak& peak) {
  fmt::print("\nloss {} -> {} in {} step{}, {} per step measured ({}), {} predicted\n",
             FormatLoss(records.front().loss), FormatLoss(records.back().loss), records.size(),
             records.size() == 1 ? "" : "s", FormatSeconds(MeasuredStepSeconds(records)),
             MeasuredStepNote(records), FormatSeconds(executable.estimate().step_seconds()));
  fmt::print("memory {} per device at peak measured (device {}, at {}), {} predicted\n",
             FormatBytes(peak.bytes), peak.device, peak.instruction,
             FormatBytes(executable.estimate().peak_memory_bytes));
}

// What the interpreter ran for want of a fast kernel, over every device and traced step.
std::string InterpretedText(const std::map<std::string, int64_t>& opcodes) {
  if (opcodes.empty()) return "every instruction ran on a fast kernel";
  std::string text = "on the interpreter (no fast kernel):";
  for (const auto& [opcode, count] : opcodes) text += fmt::format(" {} x{},", opcode, count);
  text.pop_back();
  return text;
}

// What a saved plan must have been made for to run here.
plan::document::RunIdentity RunIdentityOf(const ZooStep& zoo, const ClusterRunOptions& options) {
  return {zoo.zoo.entry.name, ModuleFingerprint(*zoo.step), ModuleFingerprint(*zoo.zoo.model.loss),
          options.cluster};
}

}  // namespace

Result<api::ParallelizeOptions> ParallelizeOptionsOf(const ClusterRunOptions& options) {
  api::ParallelizeOptions parallelize;
  Result<sharding::ParallelMethod> method = sharding::ParseParallelMethod(options.method);
  if (!method.ok()) return method.status().WithContext("--method");
  parallelize.method = *method;
  if (!options.mesh.empty()) {
    ALPA_ASSIGN_OR_RETURN(parallelize.mesh_shape, ParseMeshShape(options.mesh));
  }
  parallelize.batch_axis = options.batch_axis.value_or(-1);
  parallelize.reference_kernels = options.kernels == "reference";
  return parallelize;
}

Result<std::unique_ptr<runtime::MpiWorld>> StartBackend(const ClusterRunOptions& options) {
  if (options.backend == "in-process") return std::unique_ptr<runtime::MpiWorld>();
  if (options.backend != "mpi") {
    return InvalidArgument("unknown backend '{}'; use in-process or mpi", options.backend);
  }
  if (!runtime::LaunchedByMpirun()) {
    return InvalidArgument(
        "mpi runs one device per process: start it with mpirun -np N ./alpa run ... --backend "
        "mpi (as root add --allow-run-as-root, and --oversubscribe for more ranks than cores)");
  }
  return runtime::MpiWorld::Init();
}

int RunRanks::Fail(const Status& status) const {
  return speaker() ? ReportError(status) : ExitCodeOf(status);
}

int RunRanks::FailStep(const Status& error, const std::string& what) const {
  const Status status = error.WithContext(what);
  if (mpi_ != nullptr) {
    mpi_->Abort(fmt::format("alpa: error: rank {}: {}", mpi_->rank(), status.message()),
                ExitCodeOf(status));
  }
  return ReportError(status);
}

Status RunRanks::StartTogether() const {
  if (mpi_ == nullptr) return Status::Ok();
  const std::vector<int64_t> everyone = runtime::WorldGroup(mpi_->size());
  return mpi_->communicator().Barrier(everyone).WithContext("starting the steps");
}

int RunOnCluster(const ZooStep& zoo, const ZooStep* f32_step, const ClusterRunOptions& options,
                 const TrainingRun& run) {
  const auto& [steps, seed, json, checkpoints, progress_file] = run;
  const bool pipeline_flags =
      options.schedule != "auto" || !options.manual_stages.empty() || !options.profile.empty();
  if (options.method == "pipeshard" && (!options.mesh.empty() || options.batch_axis)) {
    return ReportError(InvalidArgument(
        "--mesh and --batch-axis are single-stage flags: a pipelined plan picks each stage's "
        "mesh; give stages with --manual-stages"));
  }
  if (options.method != "pipeshard" && options.plan.empty() && pipeline_flags) {
    return ReportError(
        InvalidArgument("--schedule, --manual-stages and --profile need --method pipeshard"));
  }
  if (options.method == "pipeshard") {
    return RunPipeshardOnCluster(zoo, f32_step, options, std::nullopt, run);
  }
  if (!options.plan.empty()) {
    Result<std::optional<plan::ManualStages>> pipelined =
        plan::document::ReadSavedPipelinedStages(options.plan, RunIdentityOf(zoo, options));
    if (!pipelined.ok()) return ReportError(pipelined.status().WithContext("--plan"));
    if (*pipelined) {
      return RunPipeshardOnCluster(zoo, f32_step, options, *pipelined, run);
    }
  }
  Result<std::unique_ptr<runtime::MpiWorld>> backend = StartBackend(options);
  if (!backend.ok()) return ReportError(backend.status().WithContext("--backend"));
  runtime::MpiWorld* mpi = backend->get();
  const RunRanks ranks(mpi);
  const bool speaker = ranks.speaker();
  auto fail = [&](const Status& status) { return ranks.Fail(status); };
  // A saved plan fixes the method, the mesh, the batch axis and every strategy.
  ClusterRunOptions effective = options;
  std::optional<plan::document::SavedPlan> saved;
  if (!options.plan.empty()) {
    Result<plan::document::SavedPlan> read =
        plan::document::ReadSavedPlan(options.plan, RunIdentityOf(zoo, options));
    if (!read.ok()) return fail(read.status().WithContext("--plan"));
    saved = std::move(read).value();
    effective.method = saved->method;
    effective.mesh = saved->mesh;
    effective.batch_axis = saved->batch_axis;
  }
  Result<api::ParallelExecutable> executable =
      PlanRun(zoo, effective, saved ? saved->strategies : std::map<std::string, std::string>{});
  if (!executable.ok()) return fail(executable.status().WithContext(zoo.zoo.entry.name));
  if (mpi != nullptr) {
    const Status count = executable->CheckProcessCount(mpi->size());
    if (!count.ok()) return fail(count.WithContext(zoo.zoo.entry.name));
  }
  const auto epoch = std::chrono::steady_clock::now();
  std::optional<runtime::ExecutionTrace> trace;
  if (!options.trace.empty()) trace.emplace(executable->device_count());
  ZooTraining training(
      zoo, seed,
      std::make_unique<DeviceRunner>(*executable, mpi != nullptr ? &mpi->communicator() : nullptr,
                                     trace ? std::optional(epoch) : std::nullopt));
  Result<Resumed> resumed = ResumeFromFlags(training, checkpoints);
  if (!resumed.ok()) return ranks.FailStep(resumed.status(), zoo.zoo.entry.name);
  const int64_t first = resumed->first_step;
  if (speaker && !json) {
    PrintHeader(zoo, effective, *executable, seed, saved ? &*saved : nullptr, resumed->note);
  }
  if (const Status together = ranks.StartTogether(); !together.ok()) return fail(together);
  ProgressLog progress(speaker ? progress_file : "");
  progress.Start(effective.method, cluster::ShapeString(executable->mesh_shape()),
                 executable->device_count(), first);
  MeasuredPeak peak;
  std::optional<TrainingCheck> check;
  if (options.check && speaker) check.emplace(zoo, f32_step, seed);
  auto fail_step = [&](const Status& error) { return ranks.FailStep(error, zoo.zoo.entry.name); };
  // --check's inputs of the next step: the devices' carried values, fetched once a step (on every
  // MPI rank, as fetching is collective there).
  std::vector<ir::Literal> inputs;
  if (options.check) {
    Result<std::vector<ir::Literal>> carried = training.Carried();
    if (!carried.ok()) return fail_step(carried.status());
    inputs = std::move(carried).value();
  }
  std::vector<StepRecord> records;
  for (int64_t i = first; i < first + steps; ++i) {
    StepRecord record;
    record.step = i + 1;
    if (check) {
      const Status followed = check->Follow(inputs);  // this step's inputs, for the references
      if (!followed.ok()) return ReportError(followed);
    }
    const double start_s = SecondsSince(epoch);
    Result<double> loss = training.Step(i, record.seconds);
    if (!loss.ok()) return fail_step(loss.status());
    record.loss = *loss;
    peak.Update(executable->last_run());
    const std::vector<runtime::ExecutionProfile>& devices = executable->last_run();
    for (size_t d = 0; d < devices.size(); ++d) {
      record.peak_memory_bytes = std::max(record.peak_memory_bytes, devices[d].peak_bytes);
      if (trace) trace->Add(static_cast<int64_t>(d), devices[d].events);
    }
    if (trace) {
      trace->AddSpan({fmt::format("step {}", record.step), start_s, SecondsSince(epoch) - start_s});
    }
    if (options.check) {
      Result<std::vector<ir::Literal>> carried = training.Carried();
      if (!carried.ok()) return fail_step(carried.status());
      inputs = std::move(carried).value();
    }
    if (check) {
      Result<double> want = check->Compare(i, record.loss, inputs);
      if (!want.ok()) return ReportError(want.status());
      record.reference_loss = *want;
    }
    records.push_back(record);
    if (speaker && !json) PrintStepRow(record, options.check);
    const Status checkpointed = CheckpointIfDue(training, checkpoints, effective.method,
                                                record.step, first + steps, speaker && !json);
    if (!checkpointed.ok()) return fail_step(checkpointed);
    progress.Step(record.step);
  }
  if (!speaker) return kExitOk;
  if (json) {
    fmt::print("{}\n",
               DumpJson(ToJson(records, *executable, peak, options, check ? &*check : nullptr)));
  } else {
    PrintSummary(records, *executable, peak);
    if (check) fmt::print("{}\n", check->Text());
  }
  if (trace) {
    Status written = trace->Write(options.trace);
    if (!written.ok()) return ReportError(written.WithContext("--trace"));
    if (!json) {
      fmt::print("trace  {} (open in chrome://tracing or ui.perfetto.dev)\n", options.trace);
      fmt::print("       {}\n", InterpretedText(trace->InterpretedOpcodes()));
      fmt::print("       elementwise f32 math on {} (ALPA_MAX_CPU_ISA caps it)\n",
                 kernels::VectorInstructionSet());
    }
  }
  return check && !check->passed() ? kExitCheckFailed : kExitOk;
}

}  // namespace alpa::tools
