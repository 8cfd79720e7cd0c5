// Peak memory of the naive schedule: the entry computation's instructions run one by one in
// post order (ir::Computation::MakePostOrder), nothing is rematerialized or reused in place.
//
//   live(t) = sum(parameter bytes) + sum over non-parameter buffers b defined at a step <= t and
//             whose last use is at a step >= t of bytes(b)
//   peak    = max over steps t of live(t)
//
// The buffers, their live intervals and the aliasing rules are those of liveness.h (full shape
// bytes). This is an upper bound on what a real allocator needs for this order, and the number
// the planner's memory constraint starts from; memory_model.h says what the peak is made of.
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
