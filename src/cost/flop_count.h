// Floating-point operation counts of HLO computations (the compute half of the cost model).
//
// Counts what one execution of a computation does, per instruction:
//   dot            2 * |result| * prod(lhs contracting dim sizes)       (one multiply + one add)
//   convolution    2 * |result| * (input features / feature_group_count) * prod(kernel spatial)
//   elementwise    |result|   (unary and binary arithmetic, compare, select, clamp, convert,
//                  reduce-precision, stochastic-convert). Transcendentals (exp, log, tanh, ...)
//                  count 1 each as well: this is an operation count, not a cycle count.
//   reduce         sum over the reduced inputs of |input|   (one reducer application each)
//   reduce-window  sum over the outputs of |output| * prod(window sizes)
//   select-and-scatter  |source| * prod(window sizes) (selects) + |source| (scatters)
//   scatter        sum over the updates of |update|
//   map            |result| * flops(to_apply)
//   fusion, call, async-start: flops of the called computation, once
//   while          n * flops(body) + (n + 1) * flops(condition), n the trip count from
//                  backend_config={"known_trip_count":{"n":"N"}}; without it the loop is counted
//                  as one iteration (n = 1, condition once more) and the loop is listed in
//                  `unknown_trip_count_loops`
//   conditional    the most expensive branch
//   everything else (data movement, constants, collectives, sort, rng, custom-call, ...) 0.
// |x| is the element count of an array. Reducer and comparator computations are not recursed:
// their cost is the application count above. Fused computations are counted through their
// fusion instruction, so the breakdown shows the ops inside fusions by their own opcodes.
#ifndef ALPA_COST_FLOP_COUNT_H_
#define ALPA_COST_FLOP_COUNT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/opcode.h"
#include "support/status.h"

namespace alpa::cost {

struct FlopCount {
  // Total of one execution. A double: loop trip counts multiply counts beyond what is exact in
  // int64 only for absurd inputs, and a cost is an estimate anyway.
  double flops = 0;
  // The same total split by the opcode of the instruction that does the work (inside called
  // computations too); opcodes contributing 0 are absent.
  std::map<ir::Opcode, double> by_opcode;
  // Names of the while loops whose trip count was unknown and counted as 1, in visit order.
  std::vector<std::string> unknown_trip_count_loops;

  // flops += scale * other.flops, likewise for the breakdown; loops are appended.
  void Accumulate(const FlopCount& other, double scale);
};

// FLOPs of one execution of `computation`, following its called computations. The computation
// should have passed ir::VerifyModule; missing attributes a rule needs, a bad trip count or a
// recursive call graph are still reported as errors naming the instruction, not a crash.
Result<FlopCount> CountFlops(const ir::Computation& computation);

// FLOPs of one execution of `instruction` alone, by the same rules (its called computations
// included: a fusion counts its body, a loop its trips).
Result<FlopCount> CountFlops(const ir::Instruction& instruction);

// The trip count of a while loop from its backend_config ({"known_trip_count":{"n":"N"}}, the
// config raw or as a quoted JSON string, N a string or a number). Absent: std::nullopt. Present
// but malformed or negative: an error naming the instruction.
Result<std::optional<int64_t>> KnownTripCount(const ir::Instruction& loop);

}  // namespace alpa::cost

#endif  // ALPA_COST_FLOP_COUNT_H_
