// Broadcasts read in place: a broadcast whose every user is a loop op (loop_fusion.h) is never
// materialised. Each user runs as a loop that reads the broadcast's operand directly, through
// strides that are zero along the dimensions the broadcast adds (kernels/fused_loop.h), so the
// broadcast costs no pass over memory and no buffer. The memory model counts such a broadcast as an
// alias of its operand (cost/liveness.h), which the runtime makes true: the operand lives until the
// broadcast's last user ran.
//
// A broadcast is read in place when
//   - it is an f32, f16, bf16 or pred array that is not its computation's root and has at least
//     one user;
//   - its `dimensions` are increasing (no transpose hides in it);
//   - its result's minor dimension has at least kMinFoldedRow elements, or its operand is a
//     scalar (the users' loops copy it in runs of that length: shorter ones would cost more
//     than the copy saves);
//   - every user is a loop op (ir::IsLoopOp).
#ifndef ALPA_IR_BROADCAST_FOLDING_H_
#define ALPA_IR_BROADCAST_FOLDING_H_

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace alpa::ir {

inline constexpr int64_t kMinFoldedRow = 16;

// The broadcasts of `computation` read in place, by the rules above.
std::unordered_set<const Instruction*> BroadcastsReadInPlace(const Computation& computation);

// The strides, one per dimension of `broadcast`'s result, at which its row-major operand is read
// for the result's row-major elements: the operand's own strides along the dimensions it maps
// to, 0 along the others.
std::vector<int64_t> BroadcastReadStrides(const Instruction& broadcast);

}  // namespace alpa::ir

#endif  // ALPA_IR_BROADCAST_FOLDING_H_
