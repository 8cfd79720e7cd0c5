// Strategies of reduce, reduce-window and select-and-scatter: they follow their data operand
// (follows_operand = 0, except a reduce that may leave partial sums, below): strategy s is derived
// from strategy s of operand 0, whose spec IN (the operand's output under s) it takes as given.
//
// reduce (also variadic: every input in IN, every output in OUT, init values replicated):
//   kept dimensions keep their axes in OUT; the axes of reduced dimensions cut the sum, so
//     - the reduce all-reduces its outputs over them, bytes = TileBytes(OUT) summed over the
//       outputs (one combined collective);
//     - when the reducer is add and options.allow_partial_outputs, instead: OUT is partial over
//       them (no communication; the users' edges all-reduce or reduce-scatter). With several
//       users (HasSeveralUsers) both are offered, the partial one first, with the reduce-scatter
//       variants of the all-reduce (strategy_util.h) between them, and the set no longer
//       follows operand 0: a partial sum is paid on each user's edge, the reduce's own
//       collective once, and the solver weighs the two.
//   A partial IN stays partial in OUT when the reducer is add and partial outputs are allowed;
//   otherwise the reduce needs IN without its partial axes (its edge pays the all-reduce).
//     IN [S0,S1], reduce dimension 1  ->  "[S0,S1] -> [S0] (allreduce @ 1)"
//                                     or  "[S0,S1] -> [S0] P1 (partial @ 1)"
//
// reduce-window (also variadic): a split dimension stays split only if its window is pointwise
//   (size 1, stride 1, no padding, no dilation); the others are replicated (the edge all-gathers
//   them). OUT = that spec; partial as for reduce (an add window is linear).
//     IN [S0,S1], window 1x3 on dimension 1  ->  "[S0,S1] -> [S0,R]" (needs IN as [S0,R])
// select-and-scatter: like reduce-window; the source (shaped like the window's output) takes the
//   same spec, the init value is replicated, and partial IN is never kept (the selection compares
//   values).
//
// Names: "<IN> -> <OUT>", IN as operand 0's strategy gives it (unique when its names are).
// Costs: compute = full / (product of the axes splitting the dimensions of the input the op
// needs), memory = the output tiles.
#ifndef ALPA_SHARDING_REDUCE_STRATEGIES_H_
#define ALPA_SHARDING_REDUCE_STRATEGIES_H_

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// Errors: an instruction of another opcode, or one without the attributes its opcode needs.
Result<StrategySet> ReduceStrategies(const ir::Instruction& instruction,
                                     const StrategyContext& ctx);
Result<StrategySet> ReduceWindowStrategies(const ir::Instruction& instruction,
                                           const StrategyContext& ctx);
Result<StrategySet> SelectAndScatterStrategies(const ir::Instruction& instruction,
                                               const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_REDUCE_STRATEGIES_H_
