#include "pipeline/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace alpa::pipeline {
namespace {

std::vector<Task> GPipeTasks(int num_micro_batches) {
  std::vector<Task> tasks;
  for (int m = 0; m < num_micro_batches; ++m) tasks.push_back({TaskKind::kForward, m, 0});
  for (int m = 0; m < num_micro_batches; ++m) tasks.push_back({TaskKind::kBackward, m, 0});
  return tasks;
}

// W = min(S - s, B) forwards, then B0 F(W) B1 F(W+1) ..., then the remaining backwards.
std::vector<Task> OneFOneBTasks(int num_devices, int device, int num_micro_batches) {
  const int warmup = std::min(num_devices - device, num_micro_batches);
  std::vector<Task> tasks;
  for (int m = 0; m < warmup; ++m) tasks.push_back({TaskKind::kForward, m, 0});
  for (int m = 0; m < num_micro_batches; ++m) {
    tasks.push_back({TaskKind::kBackward, m, 0});
    if (warmup + m < num_micro_batches) tasks.push_back({TaskKind::kForward, warmup + m, 0});
  }
  return tasks;
}

// Megatron-LM forward_backward_pipelining_with_interleaving, for device `device`.
std::vector<Task> InterleavedTasks(int num_devices, int device, int num_micro_batches,
                                   int num_chunks) {
  const int total = num_micro_batches * num_chunks;
  auto nth = [&](int k, TaskKind kind) {
    const int in_group = k % (num_devices * num_chunks);
    int chunk = in_group / num_devices;
    if (kind == TaskKind::kBackward) chunk = num_chunks - 1 - chunk;
    const int micro_batch = (k / (num_devices * num_chunks)) * num_devices + k % num_devices;
    return Task{kind, micro_batch, chunk};
  };
  int warmup = total;
  if (num_micro_batches != num_devices) {
    warmup = std::min((num_devices - device - 1) * 2 + (num_chunks - 1) * num_devices, total);
  }
  std::vector<Task> tasks;
  for (int k = 0; k < warmup; ++k) tasks.push_back(nth(k, TaskKind::kForward));
  for (int k = 0; k < total - warmup; ++k) {
    tasks.push_back(nth(k + warmup, TaskKind::kForward));
    tasks.push_back(nth(k, TaskKind::kBackward));
  }
  for (int k = std::max(total - warmup, 0); k < total; ++k) {
    tasks.push_back(nth(k, TaskKind::kBackward));
  }
  return tasks;
}

}  // namespace

std::string_view ScheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return "gpipe";
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kInterleaved1F1B:
      return "interleaved-1f1b";
  }
  return "unknown";
}

Result<ScheduleKind> ParseScheduleKind(std::string_view name) {
  if (name == "gpipe") return ScheduleKind::kGPipe;
  if (name == "1f1b") return ScheduleKind::k1F1B;
  if (name == "interleaved-1f1b" || name == "interleaved") return ScheduleKind::kInterleaved1F1B;
  return InvalidArgument("unknown pipeline schedule '{}': use gpipe, 1f1b or interleaved-1f1b",
                         name);
}

Result<std::vector<ScheduleKind>> ParseSchedules(std::string_view name) {
  if (name == "auto") {
    return std::vector{ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kInterleaved1F1B};
  }
  ALPA_ASSIGN_OR_RETURN(ScheduleKind kind, ParseScheduleKind(name));
  return std::vector{kind};
}

std::string TaskName(const Task& task, bool with_chunk) {
  const char letter = task.kind == TaskKind::kForward ? 'F' : 'B';
  if (with_chunk) return fmt::format("{}{}.{}", letter, task.micro_batch, task.chunk);
  return fmt::format("{}{}", letter, task.micro_batch);
}

Result<Schedule> MakeSchedule(ScheduleKind kind, int num_devices, int num_micro_batches,
                              int num_chunks) {
  if (num_devices < 1) {
    return InvalidArgument("num_devices is {}: a pipeline needs at least one stage", num_devices);
  }
  if (num_micro_batches < 1) {
    return InvalidArgument("num_micro_batches is {}: it must be at least 1", num_micro_batches);
  }
  if (num_chunks < 1) {
    return InvalidArgument("num_chunks is {}: it must be at least 1", num_chunks);
  }
  if (num_chunks > 1 && kind != ScheduleKind::kInterleaved1F1B) {
    return InvalidArgument(
        "num_chunks is {} but schedule '{}' has one chunk per device: use "
        "interleaved-1f1b or num_chunks 1",
        num_chunks, ScheduleKindName(kind));
  }
  if (num_chunks > 1 && num_micro_batches % num_devices != 0) {
    const int below = num_micro_batches / num_devices * num_devices;
    const std::string nearest = below > 0 ? fmt::format("{} or {}", below, below + num_devices)
                                          : std::to_string(num_devices);
    return InvalidArgument(
        "num_micro_batches is {}: interleaved 1F1B needs a multiple of the {} devices (the "
        "nearest: {})",
        num_micro_batches, num_devices, nearest);
  }
  Schedule schedule;
  schedule.kind = kind;
  schedule.num_devices = num_devices;
  schedule.num_micro_batches = num_micro_batches;
  schedule.num_chunks = num_chunks;
  for (int d = 0; d < num_devices; ++d) {
    switch (kind) {
      case ScheduleKind::kGPipe:
        schedule.device_tasks.push_back(GPipeTasks(num_micro_batches));
        break;
      case ScheduleKind::k1F1B:
        schedule.device_tasks.push_back(OneFOneBTasks(num_devices, d, num_micro_batches));
        break;
      case ScheduleKind::kInterleaved1F1B:
        // One chunk per device is plain 1F1B (Megatron's interleaved warm-up count assumes v > 1).
        schedule.device_tasks.push_back(
            num_chunks == 1 ? OneFOneBTasks(num_devices, d, num_micro_batches)
                            : InterleavedTasks(num_devices, d, num_micro_batches, num_chunks));
        break;
    }
  }
  return schedule;
}

}  // namespace alpa::pipeline
