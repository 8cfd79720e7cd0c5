// How a pipeline holds one stage step's buffers: the runtime runs the step as three programs
// (spmd/stage_split.h: forward and backward per micro-batch, the update once per step) and
// frees a micro-batch's values as they are consumed (runtime/pipeline_executor.h), where the
// step's memory model (cost/memory_model.h) holds every parameter and result to its end and
// every saved activation until its reader. From that model:
//
//   activation  what a micro-batch holds from its forward to its backward: the saved
//               activations as the stage split hands them over (a broadcast or bitcast the
//               backward reads is computed again there from its operands, which are handed
//               over in its place; a constant is computed again), and the inputs it received
//               with its forward that its backward reads (the others are freed after the
//               forward)
//   recomputed  of the forward's broadcasts the backward reads, those it materialises: the
//               backward computes them again as it starts and holds them to their last reader,
//               so in a stage of several layers a layer's backward runs beside those of the
//               layers before it (plan/stage_composition.h)
//   task peak   the most live while its forward and backward run, the micro-batch's inputs
//               freed after their last reader and the values it sends on once sent, and the
//               backward's inputs not yet received while the forward runs:
//                 max over forward and backward steps t of usage(t) - not_held(t)
//               where not_held(t) counts each such input only while the model holds it
//   update      what the update adds to the static bytes at its peak: its own live buffers (its
//               new weights and state, its working values) less the gradients it has read for
//               the last time (static counts them), plus the partitioner's buffers around the
//               step (usage(t) beyond its live buffers: cost/liveness.h's lowered moments);
//               of it, what stays live to the end (its results less the gradients freed)
//
// A reader that aliases its operand (a tuple, a bitcast) reads it through its own readers, and
// the step's root reads nothing: the pipeline takes the values it sends on when the forward
// ends and the update's results when it ends. A stage that receives cotangents is not the last,
// and its loss (its sent values times their cotangents) only seeds the backward: the pipeline
// runs neither it nor the values only it reads, so they read nothing and hold nothing.
#ifndef ALPA_PLAN_PIPELINED_STEP_MEMORY_H_
#define ALPA_PLAN_PIPELINED_STEP_MEMORY_H_

#include <cstdint>
#include <vector>

#include "cost/memory_model.h"
#include "ir/computation.h"

namespace alpa::plan {

struct PipelinedStepMemory {
  int64_t activation_bytes = 0;
  int64_t recomputed_bytes = 0;
  int64_t task_peak_bytes = 0;
  int64_t update_temporary_bytes = 0;
  int64_t update_result_bytes = 0;  // of update_temporary_bytes
};

// `memory` is the model of `entry` (the stage's train step on one micro-batch); `forward_inputs`
// the parameters a micro-batch brings to its forward (activations received, the batch),
// `backward_inputs` those it brings to its backward (the cotangents of the values it sends on),
// `sent` the values it sends on.
PipelinedStepMemory PipelinedMemoryOf(const ir::Computation& entry, const cost::MemoryModel& memory,
                                      const std::vector<const ir::Instruction*>& forward_inputs,
                                      const std::vector<const ir::Instruction*>& backward_inputs,
                                      const std::vector<const ir::Instruction*>& sent);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PIPELINED_STEP_MEMORY_H_
