// Peak memory of each device of a pipelined plan, and the smallest device memory the plan fits in.
//
// Each (virtual) stage brings, per device of its mesh (cost/memory_model.h gives the figures):
//   static_bytes       weights + gradients + optimizer state, held the whole step
//   activation_bytes   the saved activations of one micro-batch, held from the start of its
//                      forward to the end of its backward
//   temporary_bytes    what the stage needs besides those while it runs one task (its working
//                      values: the temporaries of its computation's peak)
//
// Device d runs its stages (one, or v chunks under interleaved 1F1B) one task at a time:
//
//   update_temporary_bytes  what the stage's once-per-step update needs besides static: its new
//                      weights and state and its working values, after every backward (no
//                      activations held)
//
//   peak(d) = sum_j static(j) + max(max over time of sum_j activation(j) · in_flight(j, t)
//                                     + max_j temporary(j),
//                                   max_j update_temporary(j))
//   smallest memory the plan fits in = max over devices d of peak(d)
//
// The first two terms are the simulator's per-device peak (simulator.h): in_flight counts the
// micro-batches between the start of their forward and the end of their backward, which depends
// only on the device's task order. Closed forms with S devices and B micro-batches: GPipe holds
// all B on every device; 1F1B holds min(B, S - s) on device s. Adding the largest temporaries to
// the largest in-flight activations is an upper bound, reached when a stage's temporaries peak
// while the most micro-batches are in flight (the 1F1B steady state).
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
};

struct DeviceMemory {
  int64_t static_bytes = 0;      // sum over its stages
  int64_t activation_bytes = 0;  // the most held at once
  int64_t temporary_bytes = 0;   // the largest of its stages'
  int64_t update_temporary_bytes = 0;  // likewise: its stages update one after another
  int peak_in_flight = 0;        // micro-batches (summed over chunks) holding activations at once
  int64_t peak_bytes = 0;        // static + max(activations + temporaries, update's)
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
