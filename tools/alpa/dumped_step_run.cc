#include "tools/alpa/dumped_step_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/batch_file.h"
#include "api/dumped_step_values.h"
#include "api/dumped_train_step.h"
#include "cluster/presets.h"
#include "interp/evaluator.h"
#include "sharding/pins.h"
#include "support/units.h"
#include "tools/alpa/cluster_run.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/training_check.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

Result<std::map<std::string, double>> ParseScalars(const std::vector<std::string>& items) {
  std::map<std::string, double> scalars;
  for (const std::string& item : items) {
    const size_t equals = item.find('=');
    double value = 0;
    const char* end = item.data() + item.size();
    const auto parsed = equals == std::string::npos
                            ? std::from_chars_result{item.data(), std::errc::invalid_argument}
                            : std::from_chars(item.data() + equals + 1, end, value);
    if (equals == 0 || parsed.ec != std::errc() || parsed.ptr != end) {
      return InvalidArgument("--scalar {}: expected NAME=VALUE, e.g. p0.1=0.01", item);
    }
    scalars[item.substr(0, equals)] = value;
  }
  return scalars;
}

// The step's results: on the planned devices, or in the reference interpreter.
Result<std::vector<ir::Literal>> RunStep(const ir::Module& module,
                                         api::ParallelExecutable* executable,
                                         const std::vector<ir::Literal>& arguments) {
  if (executable != nullptr) return executable->Run(arguments);
  ALPA_ASSIGN_OR_RETURN(ir::Literal root, interp::EvaluateModule(module, arguments));
  return std::move(root.tuple_elements());
}

// The worst of one step's results against the reference's, as a fraction of its tolerance.
struct Worst {
  double fraction = 0;
  double difference = 0;
  int64_t result = -1;
};

Worst Compare(const std::vector<ir::Literal>& got, const std::vector<ir::Literal>& want,
              int64_t loss_result) {
  Worst worst;
  for (size_t k = 0; k < want.size(); ++k) {
    const ir::Literal& a = got[k];
    const ir::Literal& b = want[k];
    if (!ir::IsFloating(b.shape().dtype()) || a.element_count() != b.element_count()) continue;
    double largest = 0, difference = 0;
    for (int64_t i = 0; i < b.element_count(); ++i) {
      largest = std::max(largest, std::abs(b.GetDouble(i)));
      difference = std::max(difference, std::abs(a.GetDouble(i) - b.GetDouble(i)));
    }
    const bool loss = static_cast<int64_t>(k) == loss_result;
    const double tolerance = kRelativeTolerance * std::max(loss ? 1.0 : 1e-3, largest);
    const double fraction = std::isnan(difference) ? INFINITY : difference / tolerance;
    if (worst.result < 0 || fraction > worst.fraction) {
      worst = {fraction, difference, static_cast<int64_t>(k)};
    }
  }
  return worst;
}

void PrintHeader(const api::TrainStep& step, const api::DumpedStepValues& values,
                 const RunOptions& options, const api::ParallelExecutable* executable) {
  int64_t weights = 0, state = 0;
  for (size_t p = 0; p < step.parameters.size(); ++p) {
    const int64_t elements = values.arguments[p].element_count();
    if (step.parameters[p].role == cost::ParameterRole::kWeight) weights += elements;
    if (step.parameters[p].role == cost::ParameterRole::kOptimizerState) state += elements;
  }
  fmt::print(
      "training {} (a dumped train step: {} weights, {} optimizer state, batch of {}) "
      "{}, seed {}\n",
      options.model, weights, state, values.batch_rows,
      executable == nullptr ? "in the reference interpreter"
                            : fmt::format("on {} in-process devices ({})",
                                          executable->device_count(), options.cluster.cluster),
      options.seed);
  fmt::print("loss     {}\n", values.loss_result < 0
                                  ? "none (no floating-point scalar result)"
                                  : fmt::format("result {}", values.loss_result));
  if (executable != nullptr) {
    fmt::print("plan     {} on mesh [{}]: {} per step predicted, {} per device\n",
               options.cluster.method, fmt::join(executable->mesh_shape(), ","),
               FormatSeconds(executable->estimate().step_seconds()),
               FormatBytes(executable->estimate().peak_memory_bytes));
  }
  PrintStepHeader(options.cluster.check);
}

}  // namespace

int RunDumpedStep(const RunOptions& options) {
  const ClusterRunOptions& cluster = options.cluster;
  if (options.steps < 1) {
    return ReportError(InvalidArgument("--steps {}: it must be at least 1", options.steps));
  }
  if (!cluster.cluster.empty() &&
      (cluster.method == "pipeshard" || cluster.backend != "in-process" || !cluster.plan.empty() ||
       !cluster.trace.empty())) {
    return ReportError(InvalidArgument(
        "{}: a dumped train step runs with --method data, zero2, zero3 or shard on in-process "
        "devices; pipeshard needs layers (lower the loss instead), and --backend mpi, --plan "
        "and --trace are not supported for it yet",
        options.model));
  }
  if (options.checkpoints.any()) {
    return ReportError(Unimplemented(
        "{}: --checkpoint-dir and --resume train zoo and imported models; a dumped train step "
        "has no checkpoints yet",
        options.model));
  }
  if (const std::vector<std::string> given = options.zoo.GivenFlags(); !given.empty()) {
    return ReportError(InvalidArgument(
        "{}: {} shape or train a model we build; a dumped train step is built already (its "
        "optimizer and learning rate are in it: give its scalars with --scalar NAME=VALUE)",
        options.model, fmt::join(given, ", ")));
  }
  Result<std::unique_ptr<ir::Module>> module = LoadModel(options.model);
  if (!module.ok()) return ReportError(module.status());
  Result<api::TrainStep> step = api::DescribeDumpedTrainStep(**module);
  if (!step.ok()) {
    return ReportError(step.status().WithContext(fmt::format(
        "{}: run trains a zoo model, an ONNX export, an HLO loss given --weights, or a whole "
        "train step dumped with its state donated, and as such a step",
        options.model)));
  }
  Result<std::map<std::string, double>> scalars = ParseScalars(options.scalars);
  if (!scalars.ok()) return ReportError(scalars.status());
  Result<api::DumpedStepValues> values =
      api::InitialDumpedStepValues(*step, *scalars, options.seed);
  if (!values.ok()) return ReportError(values.status().WithContext(options.model));
  models::BatchGenerator batches = api::SyntheticDumpedBatches(*step);
  if (options.zoo.batch_file) {
    std::vector<int64_t> not_batch;
    for (int64_t p = 0; p < static_cast<int64_t>(values->arguments.size()); ++p) {
      if (!std::binary_search(values->batch.begin(), values->batch.end(), p))
        not_batch.push_back(p);
    }
    Result<models::BatchGenerator> read = api::BatchesFromFile(
        *options.zoo.batch_file, *(*module)->entry(), not_batch, values->batch_rows);
    if (!read.ok()) return ReportError(read.status().WithContext("--batch-file"));
    batches = std::move(read).value();
  }

  std::optional<api::ParallelExecutable> executable;
  if (!cluster.cluster.empty()) {
    Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument(cluster.cluster);
    if (!spec.ok()) return ReportError(spec.status().WithContext("--cluster"));
    Result<api::ParallelizeOptions> parallelize = ParallelizeOptionsOf(cluster);
    if (!parallelize.ok()) return ReportError(parallelize.status());
    // The module's own shardings (a jit's in/out shardings, with_sharding_constraint) are pins,
    // as `alpa plan` and the Python package read them.
    const ir::Computation* entry = (*module)->entry();
    parallelize->mesh_pins = [entry](const std::vector<int64_t>& shape) {
      return sharding::PinsFromHloShardings(*entry, shape);
    };
    Result<api::ParallelExecutable> planned = api::Parallelize(*step, *spec, *parallelize);
    if (!planned.ok()) return ReportError(planned.status().WithContext(options.model));
    executable.emplace(std::move(planned).value());
  }
  const bool check = cluster.check && executable.has_value();
  if (!options.json) PrintHeader(*step, *values, options, executable ? &*executable : nullptr);

  std::vector<StepRecord> records;
  Worst worst;
  int64_t worst_step = 0;
  for (int64_t i = 0; i < options.steps; ++i) {
    std::vector<ir::Literal> batch = batches(values->batch_rows, options.seed + i);
    for (size_t b = 0; b < values->batch.size(); ++b) {
      values->arguments[static_cast<size_t>(values->batch[b])] = std::move(batch[b]);
    }
    StepRecord record{.step = i + 1};
    const auto start = std::chrono::steady_clock::now();
    Result<std::vector<ir::Literal>> results =
        RunStep(**module, executable ? &*executable : nullptr, values->arguments);
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!results.ok()) {
      return ReportError(results.status().WithContext(fmt::format("step {}", record.step)));
    }
    if (values->loss_result >= 0) record.loss = (*results)[values->loss_result].GetDouble(0);
    if (executable) record.peak_memory_bytes = executable->peak_memory_bytes();
    if (check) {
      Result<std::vector<ir::Literal>> reference = RunStep(**module, nullptr, values->arguments);
      if (!reference.ok()) {
        return ReportError(reference.status().WithContext(
            fmt::format("step {}: the reference interpreter", record.step)));
      }
      if (values->loss_result >= 0) {
        record.reference_loss = (*reference)[values->loss_result].GetDouble(0);
      }
      const Worst step_worst = Compare(*results, *reference, values->loss_result);
      if (worst_step == 0 || step_worst.fraction > worst.fraction) {
        worst = step_worst;
        worst_step = record.step;
      }
    }
    if (!std::isfinite(record.loss)) {
      return ReportError(InvalidArgument("{}: the loss of step {} is {}: training diverged",
                                         options.model, record.step, record.loss));
    }
    api::AdvanceDumpedStep(*values, *results);
    records.push_back(record);
    if (!options.json) PrintStepRow(record, check);
  }
  const bool passed = !check || worst.fraction <= 1;
  if (options.json) {
    nlohmann::ordered_json json = {{"steps", StepRecordsJson(records, check)}};
    if (check) {
      json["check"] = {{"passed", passed},
                       {"worst_step", worst_step},
                       {"worst_result", worst.result},
                       {"worst_difference", worst.difference},
                       {"worst_fraction_of_tolerance", worst.fraction}};
    }
    fmt::print("{}\n", DumpJson(json));
  } else {
    fmt::print(
        "\nloss {} -> {} in {} steps, {} per step measured (median of the steps after the "
        "first)\n",
        FormatLoss(records.front().loss), FormatLoss(records.back().loss), records.size(),
        FormatSeconds(MeasuredStepSeconds(records)));
    if (check) {
      fmt::print("check {}: worst result {} at step {}, {:.2f} of its tolerance (|diff| {:.1e})\n",
                 passed ? "passed" : "FAILED", worst.result, worst_step, worst.fraction,
                 worst.difference);
    }
  }
  std::fflush(stdout);
  return passed ? kExitOk : kExitCheckFailed;
}

}  // namespace alpa::tools
