// Flattening an imported module's entry into one straight-line computation: calls inlined
// (call_inlining.h), counted loops unrolled (loop_unrolling.h), and the unrolled iterations'
// indices folded (index_folding.h), repeated until no call or counted loop is left (a loop in a
// loop body is reached once its outer loop is unrolled). What JAX writes today, a scanned layer
// stack and jitted helpers, becomes what the planner, the partitioner and the pipeline's layer
// construction work on: every layer's instructions in the entry, each iteration's FLOPs, memory
// and strategies its own, the stacked weights read by slices that the ILP shards as it shards
// any weight.
//
//   ir::ControlFlowFlattening flattened = ir::FlattenControlFlow(*module->entry());
//
// A loop without a proven trip count (a `while` whose condition reads more than its counter)
// stays and runs replicated, as before; it is named in the result for the caller to report.
#ifndef ALPA_IR_CONTROL_FLOW_FLATTENING_H_
#define ALPA_IR_CONTROL_FLOW_FLATTENING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/loop_unrolling.h"

namespace alpa::ir {

struct ControlFlowFlattening {
  int64_t calls_inlined = 0;
  int64_t loops_unrolled = 0;
  int64_t iterations = 0;
  std::vector<KeptLoop> loops_kept;
};

// At most this many instructions after unrolling: a loop whose iterations would pass it stays.
// 4M is about 40x the largest zoo train step (gpt-39b, 48 layers, unrolled by construction).
inline constexpr int64_t kMaxFlattenedInstructions = 4'000'000;

ControlFlowFlattening FlattenControlFlow(Computation& entry,
                                         int64_t max_instructions = kMaxFlattenedInstructions);

}  // namespace alpa::ir

#endif  // ALPA_IR_CONTROL_FLOW_FLATTENING_H_
