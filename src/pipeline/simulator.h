// Event-driven simulation of one training step of a pipelined plan.
//
// Model. The model is cut into V virtual stages j = 0 .. V-1 (V = S·v: S devices, v chunks per
// device; virtual stage j runs on device j % S as its chunk j / S, so v == 1 means stage j on
// device j). For every micro-batch m:
//   F(j, m) starts after F(j-1, m) ends + forward_transfer_s[j-1]     (the activation arrives)
//   B(j, m) starts after B(j+1, m) ends + backward_transfer_s[j]      (the gradient arrives)
//           and after F(j, m) ends                                     (its saved activations)
// A device runs the task list the schedule gives it (schedule.h) in order, one task at a time,
// each as early as its inputs and the device allow. Transfers overlap with compute: they occupy
// no device time and any number may be in flight at once (a dedicated link per stage boundary
// with no contention). The step starts at 0; the gradient sync and optimizer update after the
// last backward are not part of it.
//
// Outputs.
//   step_time_s      = max over tasks of end
//   bubble_fraction  = 1 - sum(busy time of all devices) / (S · step_time_s)
//   critical_path_s  = longest dependency chain ignoring the order of tasks on a device
//                    = max over m of sum_j (f_j(m) + b_j(m)) + sum of all transfers;
//                      no schedule can be faster, and step_time_s >= it
//   peak memory      = per device: static bytes of its stages + the maximum over time of the
//                      activation bytes held. A micro-batch's activations on stage j are counted
//                      from the start of F(j, m) to the end of B(j, m) (allocated when the forward
//                      begins, freed when the backward finishes). Because a device runs one task
//                      at a time these events are ordered by its task list, so the count has no
//                      tie to break.
//
// Why simulate: Alpa's DP uses the closed formula sum(t_i) + (B-1)·max(t_i) (alpa_formula.h),
// which is exact for equal stages without transfers but off, either way, for unequal stages
// (notably 1F1B with B < S) and ignores transfers; the simulator is exact for the model above
// for any B and any schedule.
#ifndef ALPA_PIPELINE_SIMULATOR_H_
#define ALPA_PIPELINE_SIMULATOR_H_

#include <cstdint>
#include <vector>

#include "pipeline/schedule.h"
#include "support/status.h"

namespace alpa::pipeline {

struct StageSpec {
  double forward_s = 0;   // forward time of one micro-batch
  double backward_s = 0;  // backward time of one micro-batch
  // Optional per-micro-batch times (size B) that replace forward_s / backward_s when non-empty.
  std::vector<double> forward_per_micro_batch_s;
  std::vector<double> backward_per_micro_batch_s;
  int64_t static_bytes = 0;      // weights + gradients + optimizer state, held all step
  int64_t activation_bytes = 0;  // saved per in-flight micro-batch (forward start .. backward end)
};

struct PipelineSpec {
  std::vector<StageSpec> stages;  // V = S · num_chunks virtual stages, in model order
  // Size V - 1 (boundary j: between virtual stages j and j+1), or empty for no transfer cost.
  std::vector<double> forward_transfer_s;   // activation j -> j+1
  std::vector<double> backward_transfer_s;  // gradient j+1 -> j
  int num_micro_batches = 1;
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int num_chunks = 1;  // model chunks per device; > 1 only with kInterleaved1F1B
};

struct TaskTiming {
  int device = 0;
  int stage = 0;  // virtual stage
  Task task;
  double start_s = 0;
  double end_s = 0;
};

struct DeviceStats {
  double busy_s = 0;
  int64_t static_bytes = 0;
  int64_t peak_bytes = 0;  // static + peak activations
  int peak_in_flight = 0;  // most micro-batches (summed over chunks) holding activations
};

struct SimulationResult {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int num_devices = 0;
  int num_chunks = 1;
  int num_micro_batches = 0;
  // Per device, in the order the device runs them (device 0's first, then device 1's, ...).
  std::vector<TaskTiming> tasks;
  std::vector<DeviceStats> devices;
  double step_time_s = 0;
  double bubble_fraction = 0;
  double critical_path_s = 0;
};

// Checks the spec; errors (INVALID_ARGUMENT) name the field: no stages, num_micro_batches < 1,
// negative or non-finite times or bytes, transfer or per-micro-batch vectors of the wrong size,
// stages not divisible by num_chunks, and what MakeSchedule rejects.
Status ValidatePipelineSpec(const PipelineSpec& spec);

// Builds the schedule from spec.schedule and simulates it.
Result<SimulationResult> SimulatePipeline(const PipelineSpec& spec);

// Simulates a given schedule (which must match the spec's devices, micro-batches and chunks and
// list every task once). FAILED_PRECONDITION if its task order deadlocks.
Result<SimulationResult> SimulateSchedule(const PipelineSpec& spec, const Schedule& schedule);

// The longest dependency chain of the spec (critical_path_s above), without simulating.
double CriticalPath(const PipelineSpec& spec);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_SIMULATOR_H_
