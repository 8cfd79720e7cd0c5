#include "pipeline/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace alpa::pipeline {
namespace {

constexpr double kNotDone = -1.0;

Status CheckTime(double value, const std::string& field) {
  if (!std::isfinite(value) || value < 0) {
    return InvalidArgument("{} is {}: times must be finite and >= 0 seconds", field, value);
  }
  return Status::Ok();
}

Status CheckTimes(const std::vector<double>& values, size_t allowed_size, const std::string& field,
                  const std::string& size_meaning) {
  if (!values.empty() && values.size() != allowed_size) {
    return InvalidArgument("{} has {} entries: it needs {} ({}) or none", field, values.size(),
                           allowed_size, size_meaning);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    ALPA_RETURN_IF_ERROR(CheckTime(values[i], fmt::format("{}[{}]", field, i)));
  }
  return Status::Ok();
}

double ForwardTime(const StageSpec& stage, int micro_batch) {
  return stage.forward_per_micro_batch_s.empty() ? stage.forward_s
                                                 : stage.forward_per_micro_batch_s[micro_batch];
}
double BackwardTime(const StageSpec& stage, int micro_batch) {
  return stage.backward_per_micro_batch_s.empty() ? stage.backward_s
                                                  : stage.backward_per_micro_batch_s[micro_batch];
}
double Transfer(const std::vector<double>& transfers, int boundary) {
  return transfers.empty() ? 0.0 : transfers[boundary];
}

// Every device lists each of its (kind, micro-batch, chunk) exactly once.
Status CheckScheduleMatches(const PipelineSpec& spec, const Schedule& schedule) {
  const int num_devices = static_cast<int>(spec.stages.size()) / spec.num_chunks;
  if (schedule.num_devices != num_devices ||
      static_cast<int>(schedule.device_tasks.size()) != num_devices ||
      schedule.num_micro_batches != spec.num_micro_batches ||
      schedule.num_chunks != spec.num_chunks) {
    return InvalidArgument(
        "schedule is for {} devices, {} micro-batches, {} chunks but the spec has {}, {}, {}",
        schedule.device_tasks.size(), schedule.num_micro_batches, schedule.num_chunks, num_devices,
        spec.num_micro_batches, spec.num_chunks);
  }
  const int per_kind = spec.num_micro_batches * spec.num_chunks;
  for (int d = 0; d < num_devices; ++d) {
    std::vector<bool> seen(2 * per_kind, false);
    const auto& tasks = schedule.device_tasks[d];
    for (const Task& task : tasks) {
      if (task.micro_batch < 0 || task.micro_batch >= spec.num_micro_batches || task.chunk < 0 ||
          task.chunk >= spec.num_chunks) {
        return InvalidArgument("schedule device {} has task {} out of range", d,
                               TaskName(task, true));
      }
      const int index = (task.kind == TaskKind::kBackward ? per_kind : 0) +
                        task.chunk * spec.num_micro_batches + task.micro_batch;
      if (seen[index]) {
        return InvalidArgument("schedule device {} lists task {} twice", d, TaskName(task, true));
      }
      seen[index] = true;
    }
    if (static_cast<int>(tasks.size()) != 2 * per_kind) {
      return InvalidArgument("schedule device {} has {} tasks, expected {}", d, tasks.size(),
                             2 * per_kind);
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidatePipelineSpec(const PipelineSpec& spec) {
  if (spec.stages.empty()) {
    return InvalidArgument("stages is empty: a pipeline needs at least one stage");
  }
  if (spec.num_micro_batches < 1) {
    return InvalidArgument("num_micro_batches is {}: it must be at least 1",
                           spec.num_micro_batches);
  }
  if (spec.num_chunks < 1 || spec.stages.size() % spec.num_chunks != 0) {
    return InvalidArgument("num_chunks is {}: it must be >= 1 and divide the {} stages",
                           spec.num_chunks, spec.stages.size());
  }
  const size_t num_boundaries = spec.stages.size() - 1;
  ALPA_RETURN_IF_ERROR(CheckTimes(spec.forward_transfer_s, num_boundaries, "forward_transfer_s",
                                  "one per stage boundary"));
  ALPA_RETURN_IF_ERROR(CheckTimes(spec.backward_transfer_s, num_boundaries, "backward_transfer_s",
                                  "one per stage boundary"));
  const size_t num_micro_batches = static_cast<size_t>(spec.num_micro_batches);
  for (size_t j = 0; j < spec.stages.size(); ++j) {
    const StageSpec& stage = spec.stages[j];
    const std::string name = fmt::format("stages[{}]", j);
    ALPA_RETURN_IF_ERROR(CheckTime(stage.forward_s, name + ".forward_s"));
    ALPA_RETURN_IF_ERROR(CheckTime(stage.backward_s, name + ".backward_s"));
    ALPA_RETURN_IF_ERROR(CheckTimes(stage.forward_per_micro_batch_s, num_micro_batches,
                                    name + ".forward_per_micro_batch_s", "one per micro-batch"));
    ALPA_RETURN_IF_ERROR(CheckTimes(stage.backward_per_micro_batch_s, num_micro_batches,
                                    name + ".backward_per_micro_batch_s", "one per micro-batch"));
    if (stage.static_bytes < 0) {
      return InvalidArgument("{}.static_bytes is {}: it must be >= 0", name, stage.static_bytes);
    }
    if (stage.activation_bytes < 0) {
      return InvalidArgument("{}.activation_bytes is {}: it must be >= 0", name,
                             stage.activation_bytes);
    }
  }
  const int num_devices = static_cast<int>(spec.stages.size()) / spec.num_chunks;
  return MakeSchedule(spec.schedule, num_devices, spec.num_micro_batches, spec.num_chunks).status();
}

double CriticalPath(const PipelineSpec& spec) {
  double transfers = 0;
  for (double t : spec.forward_transfer_s) transfers += t;
  for (double t : spec.backward_transfer_s) transfers += t;
  double longest = 0;
  for (int m = 0; m < spec.num_micro_batches; ++m) {
    double chain = transfers;
    for (const StageSpec& stage : spec.stages)
      chain += ForwardTime(stage, m) + BackwardTime(stage, m);
    longest = std::max(longest, chain);
  }
  return longest;
}

Result<SimulationResult> SimulatePipeline(const PipelineSpec& spec) {
  ALPA_RETURN_IF_ERROR(ValidatePipelineSpec(spec));
  const int num_devices = static_cast<int>(spec.stages.size()) / spec.num_chunks;
  ALPA_ASSIGN_OR_RETURN(Schedule schedule, MakeSchedule(spec.schedule, num_devices,
                                                        spec.num_micro_batches, spec.num_chunks));
  return SimulateSchedule(spec, schedule);
}

Result<SimulationResult> SimulateSchedule(const PipelineSpec& spec, const Schedule& schedule) {
  ALPA_RETURN_IF_ERROR(ValidatePipelineSpec(spec));
  ALPA_RETURN_IF_ERROR(CheckScheduleMatches(spec, schedule));
  const int num_stages = static_cast<int>(spec.stages.size());
  const int num_devices = num_stages / spec.num_chunks;
  const int num_micro_batches = spec.num_micro_batches;

  // End times of F(j, m) and B(j, m), kNotDone until simulated.
  std::vector<std::vector<double>> forward_end(num_stages,
                                               std::vector<double>(num_micro_batches, kNotDone));
  std::vector<std::vector<double>> backward_end = forward_end;
  std::vector<size_t> next(num_devices, 0);
  std::vector<double> device_free(num_devices, 0.0);
  std::vector<std::vector<TaskTiming>> timings(num_devices);

  // The time the inputs of `task` on `stage` have all arrived, or kNotDone.
  auto ready_time = [&](const Task& task, int stage) {
    const int m = task.micro_batch;
    if (task.kind == TaskKind::kForward) {
      if (stage == 0) return 0.0;
      const double prev = forward_end[stage - 1][m];
      return prev == kNotDone ? kNotDone : prev + Transfer(spec.forward_transfer_s, stage - 1);
    }
    double ready = forward_end[stage][m];
    if (ready == kNotDone) return kNotDone;
    if (stage + 1 < num_stages) {
      const double next_grad = backward_end[stage + 1][m];
      if (next_grad == kNotDone) return kNotDone;
      ready = std::max(ready, next_grad + Transfer(spec.backward_transfer_s, stage));
    }
    return ready;
  };

  // Each round lets every device run the tasks whose inputs are there; the start times do not
  // depend on the round a task is found in, only on its inputs and its device's previous task.
  for (bool progress = true; progress;) {
    progress = false;
    for (int d = 0; d < num_devices; ++d) {
      const auto& tasks = schedule.device_tasks[d];
      while (next[d] < tasks.size()) {
        const Task& task = tasks[next[d]];
        const int stage = task.chunk * num_devices + d;
        const double ready = ready_time(task, stage);
        if (ready == kNotDone) break;
        const StageSpec& spec_stage = spec.stages[stage];
        const double duration = task.kind == TaskKind::kForward
                                    ? ForwardTime(spec_stage, task.micro_batch)
                                    : BackwardTime(spec_stage, task.micro_batch);
        TaskTiming timing{d, stage, task, std::max(ready, device_free[d]), 0.0};
        timing.end_s = timing.start_s + duration;
        device_free[d] = timing.end_s;
        (task.kind == TaskKind::kForward ? forward_end : backward_end)[stage][task.micro_batch] =
            timing.end_s;
        timings[d].push_back(timing);
        ++next[d];
        progress = true;
      }
    }
  }
  for (int d = 0; d < num_devices; ++d) {
    if (next[d] < schedule.device_tasks[d].size()) {
      return FailedPrecondition(
          "the {} schedule deadlocks: device {} waits forever at task {} (its inputs come from "
          "a task that is ordered after another waiting task)",
          ScheduleKindName(schedule.kind), d,
          TaskName(schedule.device_tasks[d][next[d]], spec.num_chunks > 1));
    }
  }

  SimulationResult result;
  result.schedule = schedule.kind;
  result.num_devices = num_devices;
  result.num_chunks = spec.num_chunks;
  result.num_micro_batches = num_micro_batches;
  result.devices.resize(num_devices);
  double total_busy = 0;
  for (int d = 0; d < num_devices; ++d) {
    DeviceStats& stats = result.devices[d];
    for (int c = 0; c < spec.num_chunks; ++c) {
      stats.static_bytes += spec.stages[c * num_devices + d].static_bytes;
    }
    int64_t activations = 0;
    int in_flight = 0;
    stats.peak_bytes = stats.static_bytes;
    for (const TaskTiming& timing : timings[d]) {
      stats.busy_s += timing.end_s - timing.start_s;
      result.step_time_s = std::max(result.step_time_s, timing.end_s);
      const int64_t bytes = spec.stages[timing.stage].activation_bytes;
      if (timing.task.kind == TaskKind::kForward) {  // allocated at the forward's start
        activations += bytes;
        ++in_flight;
        stats.peak_bytes = std::max(stats.peak_bytes, stats.static_bytes + activations);
        stats.peak_in_flight = std::max(stats.peak_in_flight, in_flight);
      } else {  // freed at the backward's end
        activations -= bytes;
        --in_flight;
      }
      result.tasks.push_back(timing);
    }
    total_busy += stats.busy_s;
  }
  result.bubble_fraction =
      result.step_time_s > 0 ? 1.0 - total_busy / (num_devices * result.step_time_s) : 0.0;
  result.critical_path_s = CriticalPath(spec);
  return result;
}

}  // namespace alpa::pipeline
