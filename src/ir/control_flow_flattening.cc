#include "ir/control_flow_flattening.h"

#include "ir/call_inlining.h"
#include "ir/index_folding.h"
#include "ir/loop_unrolling.h"

namespace alpa::ir {

ControlFlowFlattening FlattenControlFlow(Computation& entry, int64_t max_instructions) {
  ControlFlowFlattening result;
  result.calls_inlined += InlineCalls(entry);
  while (true) {
    // Unrolled loops leave calls of their bodies, and their counters become constants only once
    // the calls are inlined and folded; a nested loop's trip count is proven after that.
    LoopUnrolling unrolled = UnrollCountedLoops(entry, max_instructions);
    result.loops_kept = std::move(unrolled.loops_kept);
    if (unrolled.loops_unrolled == 0) break;
    result.loops_unrolled += unrolled.loops_unrolled;
    result.iterations += unrolled.iterations;
    result.calls_inlined += InlineCalls(entry);
    FoldUnrolledIndices(entry);
  }
  return result;
}

}  // namespace alpa::ir
