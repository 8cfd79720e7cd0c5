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
#include "runtime/execution_trace.h"
#include "runtime/mpi_communicator.h"
#include "runtime/profiler.h"
#include "spmd/collective_stats.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/run_plan.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

// --check runs each step twice from the same inputs, the devices' carried values: on the devices
// and in the reference interpreter. Each step's loss and carried arrays pass when
//   max_i |got_i - want_i| <= kRelativeTolerance * max(1e-3, max_i |want_i|) + absolute,
// where `absolute` is 0 except for the weights under Adam, AdamW or Adafactor: they divide each
// gradient by a running magnitude (Adafactor's factored for matrices, not for biases), so a
// gradient that is zero up to rounding (GPT's key bias: softmax ignores a shift shared by every
// key) moves its weight by up to about the learning rate, in a direction set by the order of the
// sums, which differs between the devices and the reference. Starting each step from the devices'
// inputs keeps such a difference from compounding over the steps (with Adafactor, a weight moved
// by noise changes the next gradients, and the state after them, beyond any fixed tolerance).
constexpr double kRelativeTolerance = 1e-4;

// The step time to set beside the prediction: the median of the steps after the first, which
// alone pays the one-time costs (fresh buffers' page faults, oneDNN's primitive creation: 28 ms
// against 5 ms warm for gpt-tiny on local:2), so that neither it nor one step slowed by a busy
// host moves the figure. With one step, that step.
double MeasuredStepSeconds(const std::vector<StepRecord>& records) {
  std::vector<double> warm;
  for (size_t i = records.size() > 1 ? 1 : 0; i < records.size(); ++i) {
    warm.push_back(records[i].seconds);
  }
  return runtime::Median(std::move(warm));
}

// What MeasuredStepSeconds took: "median of steps 2 to 10; the first took 28.5 ms".
std::string MeasuredStepNote(const std::vector<StepRecord>& records) {
  if (records.size() < 2) return "one step";
  const std::string warm = records.size() == 2
                               ? std::string("step 2")
                               : fmt::format("median of steps 2 to {}", records.size());
  return fmt::format("{}; the first took {}", warm, FormatSeconds(records.front().seconds));
}

// The worst array of a kind: its difference in units of its tolerance, and its parameter.
struct Worst {
  double fraction = 0;
  double difference = 0;  // max |got - want|
  std::string name;
};

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

double SecondsSince(std::chrono::steady_clock::time_point epoch) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch).count();
}

struct CheckResult {
  bool passed = true;
  double worst_loss = 0;  // largest relative difference of a step's loss
  Worst weights, state;
  double weight_absolute = 0;
};

double Difference(const ir::Literal& got, const ir::Literal& want, double& scale) {
  double worst = 0;
  scale = 1e-3;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    worst = std::max(worst, std::abs(got.GetDouble(i) - want.GetDouble(i)));
    scale = std::max(scale, std::abs(want.GetDouble(i)));
  }
  return worst;
}

// Compares the carried values after one step from the same inputs, keeping the worst in `result`.
void CompareCarried(const ZooStep& zoo, const ZooTraining& got, const ZooTraining& want,
                    CheckResult& result) {
  const autodiff::OptimizerConfig& optimizer = zoo.training.optimizer;
  if (optimizer.kind != autodiff::OptimizerKind::kSgd) {
    result.weight_absolute = optimizer.learning_rate;
  }
  const std::vector<ir::Instruction*> parameters = zoo.step->entry()->parameters();
  const size_t weights = zoo.zoo.model.weights.size();
  for (size_t i = 0; i < want.carried().size(); ++i) {
    double scale = 0;
    const double difference = Difference(got.carried()[i], want.carried()[i], scale);
    const bool weight = i < weights;
    const double tolerance = kRelativeTolerance * scale + (weight ? result.weight_absolute : 0.0);
    Worst& worst = weight ? result.weights : result.state;
    if (difference / tolerance >= worst.fraction) {
      worst = Worst{difference / tolerance, difference, parameters[i]->name()};
    }
  }
  result.passed = result.weights.fraction <= 1.0 && result.state.fraction <= 1.0;
}

void PrintHeader(const ZooStep& zoo, const ClusterRunOptions& options,
                 const api::ParallelExecutable& executable, uint64_t seed, const RunPlan* saved) {
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
        "devices' inputs\n");
  }
  fmt::print("\n{:>6}  {:>12}  {:>9}  {:>10}{}\n", "step", "loss", "time", "peak mem",
             options.check ? fmt::format("  {:>12}  {:>9}", "reference", "|diff|") : "");
  fmt::print("{:>6}  {:>12}  {:>9}  {:>10}{}\n", "------", "------------", "---------",
             "----------", options.check ? "  ------------  ---------" : "");
  std::fflush(stdout);
}

void PrintStep(const StepRecord& record, bool check) {
  fmt::print("{:>6}  {:>12}  {:>9}  {:>10}", record.step, FormatLoss(record.loss),
             FormatSeconds(record.seconds), FormatBytes(record.peak_memory_bytes));
  if (check) {
    fmt::print("  {:>12}  {:>9.2e}", FormatLoss(record.reference_loss),
               std::abs(record.loss - record.reference_loss));
  }
  fmt::print("\n");
  std::fflush(stdout);
}

std::string CheckText(const CheckResult& check) {
  std::string text = fmt::format(
      "check {}: each value within {:.0e} of its array's largest (of the loss, for losses)\n"
      "  losses           worst {:.1e} relative\n",
      check.passed ? "passed" : "FAILED", kRelativeTolerance, check.worst_loss);
  if (!check.state.name.empty()) {
    text += fmt::format("  optimizer state  worst {} at {:.2f} of its tolerance\n",
                        check.state.name, check.state.fraction);
  }
  text += fmt::format("  weights          worst {} at {:.2f} of its tolerance (|diff| {:.1e})",
                      check.weights.name, check.weights.fraction, check.weights.difference);
  if (check.weight_absolute > 0) {
    text += fmt::format(
        "\n                   (+ {:g} allowed: the learning rate, as Adam moves a weight "
        "whose gradient is zero up to rounding by up to about the learning rate)",
        check.weight_absolute);
  }
  return text;
}

nlohmann::ordered_json ToJson(const std::vector<StepRecord>& records,
                              const api::ParallelExecutable& executable, const MeasuredPeak& peak,
                              const ClusterRunOptions& options, const CheckResult* check) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const StepRecord& record : records) {
    nlohmann::ordered_json step = {{"step", record.step},
                                   {"loss", record.loss},
                                   {"time_s", record.seconds},
                                   {"peak_memory_bytes", record.peak_memory_bytes}};
    if (check != nullptr) step["reference_loss"] = record.reference_loss;
    steps.push_back(std::move(step));
  }
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
  if (check != nullptr) {
    json["check"] = {{"passed", check->passed},
                     {"relative_tolerance", kRelativeTolerance},
                     {"weight_absolute_tolerance", check->weight_absolute},
                     {"worst_loss_difference", check->worst_loss},
                     {"worst_weight", check->weights.name},
                     {"worst_weight_fraction_of_tolerance", check->weights.fraction},
                     {"worst_optimizer_state", check->state.name},
                     {"worst_optimizer_state_fraction_of_tolerance", check->state.fraction}};
  }
  return json;
}

Result<api::ParallelExecutable> PlanRun(const ZooStep& zoo, const ClusterRunOptions& options,
                                        const std::map<std::string, std::string>& strategies) {
  ALPA_ASSIGN_OR_RETURN(cluster::ClusterSpec cluster,
                        cluster::ParseClusterArgument(options.cluster));
  api::ParallelizeOptions parallelize;
  Result<sharding::ParallelMethod> method = sharding::ParseParallelMethod(options.method);
  if (!method.ok()) return method.status().WithContext("--method");
  parallelize.method = *method;
  if (!options.mesh.empty()) {
    ALPA_ASSIGN_OR_RETURN(parallelize.mesh_shape, ParseMeshShape(options.mesh));
  }
  parallelize.batch_axis = options.batch_axis.value_or(-1);
  parallelize.auto_sharding.pinned_strategies = strategies;
  parallelize.reference_kernels = options.kernels == "reference";
  ALPA_ASSIGN_OR_RETURN(api::TrainStep step, api::DescribeTrainStep(*zoo.step, StepLayout(zoo)));
  return api::Parallelize(step, cluster, parallelize);
}

// The MPI world for --backend mpi (null for in-process), or why the backend cannot run.
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

}  // namespace

int RunOnCluster(const ZooStep& zoo, const ClusterRunOptions& options, int64_t steps, uint64_t seed,
                 bool json) {
  Result<std::unique_ptr<runtime::MpiWorld>> backend = StartBackend(options);
  if (!backend.ok()) return ReportError(backend.status().WithContext("--backend"));
  runtime::MpiWorld* mpi = backend->get();
  // Under MPI every rank plans and trains; rank 0 alone prints and checks. An error every rank
  // meets alike (planning) ends each rank by itself; one rank's error in a step ends them all.
  const bool speaker = mpi == nullptr || mpi->rank() == 0;
  auto fail = [&](const Status& status) {
    return speaker ? ReportError(status) : ExitCodeOf(status);
  };
  // A saved plan fixes the method, the mesh, the batch axis and every strategy.
  ClusterRunOptions effective = options;
  std::optional<RunPlan> saved;
  if (!options.plan.empty()) {
    Result<RunPlan> read = ReadRunPlan(options.plan, zoo, options.cluster);
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
  if (speaker && !json) PrintHeader(zoo, effective, *executable, seed, saved ? &*saved : nullptr);
  if (mpi != nullptr) {
    // The ranks start their steps (and their timelines) together, not as each finishes planning.
    std::vector<int64_t> everyone(static_cast<size_t>(mpi->size()));
    std::iota(everyone.begin(), everyone.end(), 0);
    const Status together = mpi->communicator().Barrier(everyone);
    if (!together.ok()) return fail(together.WithContext("starting the steps"));
  }
  const auto epoch = std::chrono::steady_clock::now();
  std::optional<runtime::ExecutionTrace> trace;
  if (!options.trace.empty()) trace.emplace(executable->device_count());
  ZooTraining training(zoo, seed, [&](std::vector<ir::Literal> arguments) {
    const auto trace_epoch = trace ? std::optional(epoch) : std::nullopt;
    if (mpi != nullptr) {
      return executable->RunAsDevice(mpi->communicator(), arguments, trace_epoch);
    }
    return executable->Run(arguments, trace_epoch);
  });
  MeasuredPeak peak;
  std::optional<ZooTraining> reference;
  if (options.check && speaker) reference.emplace(zoo, seed);
  CheckResult check;
  std::vector<StepRecord> records;
  for (int64_t i = 0; i < steps; ++i) {
    StepRecord record;
    record.step = i + 1;
    if (reference) reference->Follow(training);  // this step's inputs, for the reference too
    const double start_s = SecondsSince(epoch);
    Result<double> loss = training.Step(i, record.seconds);
    if (!loss.ok()) {
      const Status status = loss.status().WithContext(zoo.zoo.entry.name);
      if (mpi != nullptr) {
        mpi->Abort(fmt::format("alpa: error: rank {}: {}", mpi->rank(), status.message()),
                   ExitCodeOf(status));
      }
      return ReportError(status);
    }
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
    if (reference) {
      double ignored = 0;
      Result<double> want = reference->Step(i, ignored);
      if (!want.ok()) return ReportError(want.status().WithContext("the reference interpreter"));
      record.reference_loss = *want;
      const double difference =
          std::abs(record.loss - record.reference_loss) / std::max(1.0, std::abs(*want));
      check.worst_loss = std::max(check.worst_loss, difference);
      CompareCarried(zoo, training, *reference, check);
    }
    records.push_back(record);
    if (speaker && !json) PrintStep(record, options.check);
  }
  if (!speaker) return kExitOk;
  if (reference) check.passed = check.passed && check.worst_loss <= kRelativeTolerance;
  if (json) {
    fmt::print("{}\n", DumpJson(ToJson(records, *executable, peak, options,
                                       options.check ? &check : nullptr)));
  } else {
    PrintSummary(records, *executable, peak);
    if (options.check) fmt::print("{}\n", CheckText(check));
  }
  if (trace) {
    Status written = trace->Write(options.trace);
    if (!written.ok()) return ReportError(written.WithContext("--trace"));
    if (!json) {
      fmt::print("trace  {} (open in chrome://tracing or ui.perfetto.dev)\n", options.trace);
    }
  }
  return options.check && !check.passed ? kExitCheckFailed : kExitOk;
}

}  // namespace alpa::tools
