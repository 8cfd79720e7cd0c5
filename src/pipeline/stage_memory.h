// Peak memory of each device of a pipelined plan, and the smallest device memory the plan fits in.
//
// Each (virtual) stage brings, per device of its mesh (cost/memory_model.h gives the figures):
//   static_bytes       weights + gradients' sums + optimizer state, held the whole step
//   gradient_sum_bytes of those, the gradients' running sums where the device keeps them apart
//                      from a micro-batch's (our CPU runtime: a backward writes its gradients,
//                      then they are added to the sums): held only from the end of the stage's
//                      first backward, before which a task's temporaries count the gradients it
//                      computes. 0 where the sums are held all step and added to in place (XLA)
//   activation_bytes   the saved activations of one micro-batch, held from the start of its
//                      forward to the end of its backward
//   temporary_bytes    what the stage needs besides those while it runs one task (its working
//                      values: the temporaries of its computation's peak)
//   update_temporary_bytes  what the stage's once-per-step update needs besides static: its new
//                      weights and state and its working values, after every backward (no
//                      activations held)
//
// Device d runs its stages (one, or v chunks under interleaved 1F1B) one task at a time, in the
// order of its task list (the simulator's, simulator.h), and holds while a task of stage j runs
//
//   held(task) = sum_i static(i) - sum over its stages i yet to end a backward of
//                gradient_sum(i) + activations held + temporary(j)
//
// where a forward counts its own micro-batch's activations (allocated at its start) and a
// backward still counts its own (freed at its end). Then
//
//   peak(d) = max(max over its tasks of held(task), sum_i static(i) + max_i update_temporary(i))
//   smallest memory the plan fits in = max over devices d of peak(d)
//
// Which micro-batches are in flight depends only on the device's task order. Closed forms with S
// devices and B micro-batches: GPipe holds all B on every device; 1F1B holds min(B, S - s) on
// device s. A stage's temporaries are those of its largest task, so held(task) bounds what the
// task holds, reached when the task is the one that peaks (a backward, mostly).
#ifndef ALPA_PIPELINE_STAGE_MEMORY_H_
#define ALPA_PIPELINE_STAGE_MEMORY_H_

#include <cstdint>
#include <vector>

#include "pipeline/schedule.h"
#include "support/status.h"

namespace alpa::pipeline {

struct StageMemory {
  int64_t static_bytes = 0;
  int64_t activation_bytes = 0;  // per micro-batch in flight
  int64_t temporary_bytes = 0;
  int64_t update_temporary_bytes = 0;
  int64_t gradient_sum_bytes = 0;  // of static_bytes
};

struct DeviceMemory {
  int64_t static_bytes = 0;  // sum over its stages
  // At the first of its tasks that holds the most (held(task) in the header):
  int64_t pending_gradient_bytes = 0;  // of static, the gradients' sums not yet held
  int64_t activation_bytes = 0;        // the activations held
  int peak_in_flight = 0;              // by micro-batches (summed over chunks)
  int64_t temporary_bytes = 0;         // the task's stage's
  int64_t update_temporary_bytes = 0;  // the largest of its stages': they update one by one
  // max(static - pending gradients + activations + temporaries, static + update's)
  int64_t peak_bytes = 0;
};

struct PipelineMemory {
  std::vector<DeviceMemory> devices;
  int64_t required_bytes = 0;  // max over devices of peak_bytes: the smallest memory that fits
  int bottleneck_device = 0;   // the first device needing required_bytes
};

// `stages` are the V = S · num_chunks virtual stages in model order (virtual stage j runs on
// device j % S, as simulator.h). Errors (INVALID_ARGUMENT) name the field: negative bytes, and
// what the simulator rejects (no stages, num_micro_batches < 1, stages not divisible by chunks).
Result<PipelineMemory> PipelinePeakMemory(const std::vector<StageMemory>& stages,
                                          ScheduleKind schedule, int num_micro_batches,
                                          int num_chunks = 1);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_STAGE_MEMORY_H_
