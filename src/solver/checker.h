// The independent checker: evaluates a choice (one strategy per node) against a Request with no
// help from any solver, so that every answer is verified the same way.
//
//   cost(s)  = sum_v node[v].costs[s(v)] + sum_e edge[e].costs[s(from) * |S(to)| + s(to)]
//   usage(t) = sum over v with start(v) <= t < end(v) of node[v].usages[s(v)]
//
// The cost is summed in 128 bits (forbidden entries are 1e18 each). The memory peak is found by a
// sweep over the interval endpoints, O(N log N), not over every time step: usage only changes at a
// start or an end, and at one time point the ends (leaving) are applied before the starts
// (arriving), as the intervals are half-open.
#ifndef ALPA_SOLVER_CHECKER_H_
#define ALPA_SOLVER_CHECKER_H_

#include <cstdint>
#include <span>
#include <string>

#include "solver/request.h"
#include "support/status.h"

namespace alpa::solver {

struct Evaluation {
  TotalCost cost = 0;
  // Entries of the choice at kForbiddenCost or more: how many, and the first one in words
  // ("node 3 strategy 1 costs 1000000000000000000", or the edge's "edge 5 (3 -> 7) entry [1][2]
  // ..."), nodes before edges; empty when there is none.
  int64_t num_forbidden = 0;
  std::string first_forbidden;
  // The largest usage over time and the first time step where it occurs (0 and 0 when no node
  // occupies memory at any time).
  TotalCost peak_usage = 0;
  int64_t peak_time = 0;
  bool fits_memory = true;  // peak_usage <= usage_limit (always, with no limit)

  bool feasible() const { return num_forbidden == 0 && fits_memory; }
};

// Evaluates `choice` on `request`, which must be valid (ValidateRequest). A choice of the wrong
// length or with a strategy index out of range is an InvalidArgument error naming the node.
Result<Evaluation> EvaluateChoice(const Request& request, std::span<const int64_t> choice);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_CHECKER_H_
