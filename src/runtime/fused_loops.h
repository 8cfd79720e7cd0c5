// The runtime's fused loops (ir/loop_fusion.h): a loop op with the values fused into it becomes
// one step of the instruction list that runs kernels::RunLoop over the loop's inputs, and the
// fused values get no step and no buffer.
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
  // The values the loop reads, one per input of `loop`: an array of the root's dimensions, or a
  // scalar for a repeated input (the operand of a broadcast read in place).
  std::vector<const ir::Instruction*> inputs;
  int32_t fused_values = 0;  // values computed inside the loop: its ops but the root
};

// The loop rooted at `root`, a loop op that is not itself in `fused`, with the values of `fused`
// (ir::LoopFusedValues) that it reads, transitively. `read_in_place` are the computation's
// broadcasts read in place (ir::BroadcastsReadInPlace): a loop reads their scalar operands.
FusedLoop BuildFusedLoop(const ir::Instruction& root,
                         const std::unordered_set<const ir::Instruction*>& fused,
                         const std::unordered_set<const ir::Instruction*>& read_in_place);

// Runs `loop` (rooted at `root`) on its inputs' values, in input order.
Result<ir::Literal> RunFusedLoop(const ir::Instruction& root, const FusedLoop& loop,
                                 const std::vector<const ir::Literal*>& inputs);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_FUSED_LOOPS_H_
