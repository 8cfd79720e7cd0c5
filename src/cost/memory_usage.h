// Peak memory of a naive schedule: the entry computation's instructions run one by one in
// post order (ir::Computation::MakePostOrder), nothing is rematerialized or reused in place.
//
//   live(t) = sum(parameter bytes) + sum over non-parameter buffers b defined at a step <= t and
//             whose last use is at a step >= t of bytes(b)
//   peak    = max over steps t of live(t)
//
// Rules:
//   - every instruction's result is one buffer of shape.ByteSize() bytes (tuples: all leaves),
//     allocated at its step and freed after the step of its last user; a result nobody uses is
//     freed right after its own step; the root lives to the end (it is the output);
//   - parameters live for the whole program (the caller owns them);
//   - tuple, get-tuple-element, bitcast and opt-barrier allocate nothing: they alias their
//     operands, which therefore live as long as any user of the alias;
//   - constants are buffers like any other;
//   - buffers inside called computations (fusion temporaries, loop bodies) are not counted: a
//     fusion's output is the only buffer it materializes.
// This is an upper bound on what a real allocator needs for this order, and the number the
// planner's memory constraint starts from.
#ifndef ALPA_COST_MEMORY_USAGE_H_
#define ALPA_COST_MEMORY_USAGE_H_

#include <cstdint>

#include "ir/computation.h"

namespace alpa::cost {

struct MemoryUsage {
  int64_t peak_bytes = 0;
  // The instruction whose step first reached the peak (nullptr for an empty computation).
  const ir::Instruction* peak_instruction = nullptr;
  // Bytes of all parameters, live throughout (included in peak_bytes).
  int64_t parameter_bytes = 0;
};

// Peak of the naive schedule of `computation` (which should have passed the verifier).
MemoryUsage NaivePeakMemory(const ir::Computation& computation);

}  // namespace alpa::cost

#endif  // ALPA_COST_MEMORY_USAGE_H_
