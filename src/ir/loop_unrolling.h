// Unrolling counted loops (XLA's WhileLoopUnroller, fully unrolled): a `while` whose trip count
// its condition and body prove is replaced by that many calls of its body, each on the previous
// one's result, which InlineCalls (call_inlining.h) then inlines. JAX writes `lax.scan`,
// `lax.fori_loop` and Flax's `nn.scan` over a layer stack as such loops; unrolled, every layer is
// an ordinary slice of the module that the planner shards, prices and cuts into pipeline stages
// like any other, and the loop's FLOPs and memory count once per iteration.
//
// The counted loop, as JAX and XLA emit it (XLA's ComputeWhileLoopTripCount, pattern form):
//
//   init       tuple(..., constant I, ...)                                  element k
//   condition  ROOT compare(get-tuple-element(param, k), constant N), direction=D
//              (either operand order; D one of LT, LE, GT, GE, NE)
//   body       ROOT tuple(..., add(get-tuple-element(param, k), constant S), ...)   element k
//
// The condition reads element k alone and element k takes the values I, I+S, I+2S, ..., so the
// loop runs exactly n times, n the number of those values before `value D N` first fails:
//   LT, S > 0: ceil((N - I) / S)        LE, S > 0: floor((N - I) / S) + 1
//   GT, S < 0: ceil((I - N) / -S)       GE, S < 0: floor((I - N) / -S) + 1
//   NE: (N - I) / S where S divides N - I with a non-negative quotient
// (each at least 0). Any other loop (a condition that reads more than the counter, a step of the
// wrong sign, a counter that is not a constant on entry) has no proven trip count and stays.
#ifndef ALPA_IR_LOOP_UNROLLING_H_
#define ALPA_IR_LOOP_UNROLLING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"

namespace alpa::ir {

// The trip count of `loop` (a while) when it is a counted loop as above; nullopt otherwise.
std::optional<int64_t> CountedLoopTripCount(const Instruction& loop);

// A loop left as it was, and why (no proven trip count, or too large to unroll).
struct KeptLoop {
  std::string name;
  std::string reason;
};

struct LoopUnrolling {
  int64_t loops_unrolled = 0;
  int64_t iterations = 0;  // calls of loop bodies added
  std::vector<KeptLoop> loops_kept;
};

// Replaces every counted loop of `computation` by its iterations: calls of its body named
// "<loop>.iter<i>" (a suffix XLA's names never have), the first on the loop's operand (a loop of 0
// iterations is its operand), unless the copies would take the computation past `max_instructions`
// (counting each body's own instructions once per iteration). Loops inside the bodies are unrolled
// by the next call, once the iterations are inlined.
LoopUnrolling UnrollCountedLoops(Computation& computation, int64_t max_instructions);

}  // namespace alpa::ir

#endif  // ALPA_IR_LOOP_UNROLLING_H_
