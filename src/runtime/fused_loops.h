// The runtime's fused loops (ir/loop_fusion.h): a loop op with the values fused into it becomes
// one step of the instruction list that runs kernels::RunLoop over the loop's inputs, and the
// fused values get no step and no buffer. A loop op reading a broadcast in place
// (ir/broadcast_folding.h) runs as a loop too, with no value fused into it.
#ifndef ALPA_RUNTIME_FUSED_LOOPS_H_
#define ALPA_RUNTIME_FUSED_LOOPS_H_

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "ir/instruction.h"
#include "ir/literal.h"
#include "kernels/fused_loop.h"
#include "support/status.h"

namespace alpa::runtime {

struct FusedLoop {
  kernels::Loop loop;
  // The values the loop reads, one per input of `loop`: an array of the root's dimensions, or the
  // operand of a broadcast read in place.
  std::vector<const ir::Instruction*> inputs;
};

// Whether `instruction`, a loop op that is not in `fused`, runs as a loop: it reads a value of
// `fused` (ir::LoopFusedValues) or a broadcast of `read_in_place` (ir::BroadcastsReadInPlace).
bool RunsAsLoop(const ir::Instruction& instruction,
                const std::unordered_set<const ir::Instruction*>& fused,
                const std::unordered_set<const ir::Instruction*>& read_in_place);

// The loop rooted at `root` (one that RunsAsLoop), with the values of `fused` that it reads,
// transitively.
FusedLoop BuildFusedLoop(const ir::Instruction& root,
                         const std::unordered_set<const ir::Instruction*>& fused,
                         const std::unordered_set<const ir::Instruction*>& read_in_place);

// Runs `loop` (rooted at `root`) on its inputs' values, in input order.
Result<ir::Literal> RunFusedLoop(const ir::Instruction& root, const FusedLoop& loop,
                                 const std::vector<const ir::Literal*>& inputs);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_FUSED_LOOPS_H_
