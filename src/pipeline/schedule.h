// Pipeline schedules as per-device ordered task lists (Alpa schedules.py, Megatron-LM).
//
// A schedule says, for each device (a pipeline stage's mesh), the order in which it runs the
// forward and backward passes of the micro-batches. When each task starts is the simulator's job
// (simulator.h): a device runs its list in order, one task at a time, each task as soon as its
// inputs have arrived.
//
// With S devices, B micro-batches and v model chunks per device (v > 1 only for interleaved):
//
//   GPipe (Huang et al. 2019; Alpa "gpipe"): every device runs F0 .. F(B-1), then B0 .. B(B-1).
//     Backwards go in ascending micro-batch order, as in Alpa's GpipeSchedule: its backward clocks
//     are the forward clocks reversed with micro-batch i mapped to B-1-i, so the last stage starts
//     with micro-batch 0. (With uniform micro-batches the order does not change the step time.)
//
//   1F1B (PipeDream-Flush, Narayanan et al. 2021; Alpa "1f1b", Megatron non-interleaved): device s
//     runs W(s) = min(S - s, B) warm-up forwards F0 .. F(W-1), then alternates one backward and
//     one forward, B0 F(W) B1 F(W+1) ..., until the forwards run out, then drains the remaining
//     backwards. Alpa and Megatron count min(S - s - 1, B) warm-up forwards followed by a steady
//     "one forward, one backward" phase; that is the same order. Device s thus holds at most
//     min(S - s, B) micro-batches' activations (GPipe: B).
//
//   Interleaved 1F1B (Megatron-LM, Narayanan et al. SC'21): the model is cut into S·v virtual
//     stages; virtual stage j = c·S + d runs on device d as its chunk c. Micro-batches go in
//     groups of S: the k-th forward of a device (k = 0 .. B·v-1) is chunk (k / S) % v of
//     micro-batch (k / (S·v))·S + k % S; the k-th backward likewise with chunk v-1-((k / S) % v).
//     Warm-up forwards: all B·v when B == S, else min((S - d - 1)·2 + (v - 1)·S, B·v); then the
//     steady phase runs forward (k + warm-up) then backward k; cool-down drains backwards. Like
//     Megatron this needs B to be a multiple of S (when v > 1). With v == 1 it is 1F1B.
#ifndef ALPA_PIPELINE_SCHEDULE_H_
#define ALPA_PIPELINE_SCHEDULE_H_

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace alpa::pipeline {

enum class ScheduleKind { kGPipe, k1F1B, kInterleaved1F1B };
enum class TaskKind { kForward, kBackward };

// "gpipe", "1f1b", "interleaved-1f1b".
std::string_view ScheduleKindName(ScheduleKind kind);
// The inverse of ScheduleKindName (also accepts "interleaved").
Result<ScheduleKind> ParseScheduleKind(std::string_view name);
// A schedule name or "auto": every schedule, for a planner to choose among (1F1B first).
Result<std::vector<ScheduleKind>> ParseSchedules(std::string_view name);

struct Task {
  TaskKind kind = TaskKind::kForward;
  int micro_batch = 0;
  int chunk = 0;  // model chunk on its device (always 0 unless interleaved)

  bool operator==(const Task&) const = default;
};

// "F3", "B3"; with chunks, "F3.1" (micro-batch 3 of chunk 1).
std::string TaskName(const Task& task, bool with_chunk);

struct Schedule {
  ScheduleKind kind = ScheduleKind::k1F1B;
  int num_devices = 0;
  int num_micro_batches = 0;
  int num_chunks = 1;
  // device_tasks[d]: what device d runs, in order; each (kind, micro-batch, chunk) exactly once.
  std::vector<std::vector<Task>> device_tasks;
};

// Errors (INVALID_ARGUMENT) name the field: num_devices < 1, num_micro_batches < 1,
// num_chunks < 1, num_chunks > 1 with a schedule other than interleaved, or interleaved with v > 1
// and num_micro_batches not a multiple of num_devices.
Result<Schedule> MakeSchedule(ScheduleKind kind, int num_devices, int num_micro_batches,
                              int num_chunks = 1);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_SCHEDULE_H_
