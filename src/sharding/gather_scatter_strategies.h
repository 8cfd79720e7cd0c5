// Strategies of gather and scatter (reference/alpa.md 2.a.4, kGather and kScatter), including the
// embedding lookup: gather of rows of a table f32[vocab, hidden] by token ids s32[batch, seq].
//
// A strategy gives each mesh axis of size > 1 at most one ROLE (several axes may share a role:
// the dim is split over all of them, ascending); the roles come from the dimension numbers, every
// assignment (strategy_util.h's EnumerateDimSplits over the roles' extents, divisible tiles) is a
// strategy, and the fully replicated one comes last. None follows an operand.
//
// gather(operand, indices):
//   batch   an index batch dim (not index_vector_dim): indices and the result's batch dim split;
//           an operand batching dim paired with it is split too. Each device gathers its ids.
//   offset  an operand window dim taken whole (slice size = dim, so its start clamps to 0):
//           operand and the result's offset dim split.
//   vocab   an operand dim that ids index with slice size 1 (the embedding's vocab dim): operand
//           split on it, ids replicated over the axis. Each device gathers the rows it holds and
//           writes 0 for ids outside its range, so the result is a partial sum over the axis:
//           exact for ids in range (XLA clamps an out-of-range id to the last row; here such an
//           id gives 0). The result stays partial when StrategyOptions::allow_partial_outputs
//           (the user's edge pays the all-reduce, or a reduce-scatter), else the strategy
//           all-reduces it itself.
//   e.g. embedding [V,H] x ids [B,S] on a (2, 4) mesh: "[S0,R,S1] = [R,S1] x [S0,R]" (data x
//   hidden), "[S0,R,R] P1 = [S1,R] x [S0,R]" (data x vocab-parallel, Megatron's embedding).
//
// scatter(inputs..., indices, updates...):
//   window  an operand window dim the updates cover whole and no index moves: inputs, results
//           and the updates' window dim split. Exact for any combiner.
//   vocab   an operand dim that indices address with window size 1: inputs and results split,
//           indices and updates replicated. Each device applies the updates that land in its
//           rows; an out-of-bounds update is skipped on every device as XLA skips it. Exact for
//           any combiner.
//   batch   an index batch dim: indices and the updates' scatter dim split. Paired with an input
//           batching dim, that input dim is split too (exact for any combiner). Otherwise only a
//           single-input scatter-ADD: sum_k scatter_add(x_k, u_k) = scatter_add(sum x_k, sum u_k),
//           so the input is needed partial over the axis (free from a replicated value,
//           resharding.h) and the result is partial, or all-reduced in the node as for gather.
//           This is the data-parallel embedding gradient: each device scatters its batch's
//           gradients into a zero table, and the partial table meets the gradient all-reduce.
//   Any other combiner cannot split the batch without an index: those assignments are skipped.
#ifndef ALPA_SHARDING_GATHER_SCATTER_STRATEGIES_H_
#define ALPA_SHARDING_GATHER_SCATTER_STRATEGIES_H_

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// For gather and scatter. Errors: those of the compute cost model.
Result<StrategySet> GatherScatterStrategies(const ir::Instruction& instruction,
                                            const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_GATHER_SCATTER_STRATEGIES_H_
