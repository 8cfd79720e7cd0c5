// Problems for the solver tests: random small requests and the brute-force optimum.
#ifndef ALPA_TESTS_SOLVER_TEST_PROBLEMS_H_
#define ALPA_TESTS_SOLVER_TEST_PROBLEMS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "solver/request.h"

namespace alpa::solver::testing {

// A random valid request: `num_nodes` nodes with 2 to `max_strategies` strategies, costs in
// [0, 100], usages in [0, 10], intervals inside [0, 12) (some empty), about 1.5 edges per node
// (parallel and reversed edges included); a fraction `forbidden` of the node and edge entries is
// kForbiddenCost; a usage limit between the smallest and the largest possible peak (sometimes
// below the smallest, so some problems are infeasible), or none.
Request RandomRequest(uint64_t seed, int num_nodes, int max_strategies, double forbidden);

struct BruteForce {
  std::optional<TotalCost> optimum;  // none: no feasible choice
  std::vector<int64_t> choice;       // one optimal choice
};

// Enumerates every choice (keep the product of strategy counts small).
BruteForce SolveByEnumeration(const Request& request);

}  // namespace alpa::solver::testing

#endif  // ALPA_TESTS_SOLVER_TEST_PROBLEMS_H_
