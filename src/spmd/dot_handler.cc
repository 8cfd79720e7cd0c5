// Dot: with the operands in the layouts the strategy requires (a batch or free dimension split
// alike on the operand and the result, a contracting dimension split alike on both operands), the
// local dot of the tiles is the result's tile, a partial sum over the axes splitting the
// contracting dimensions:
//   out[b, i, j] = sum_k lhs[b, i, k] rhs[b, k, j] = sum_{tiles t of k} (local dot on tile t)
// The strategy's all-reduce (or reduce-scatter) over those axes runs after it (partitioner.cc);
// a strategy that leaves the sum partial hands it on as such.
#include "spmd/handlers.h"

namespace alpa::spmd {

Result<ir::Instruction*> HandleDot(SpmdBuilder& s, const OpInput& input) {
  return EmitLocal(s, input);
}

}  // namespace alpa::spmd
