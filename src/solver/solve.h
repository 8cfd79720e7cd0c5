// One entry point for every solver of a Request (request.h).
//
//   SolveOptions options;
//   options.time_limit_s = 60;
//   Result<Answer> answer = Solve(request, options);
//
// kAuto runs the heuristic solver first (fast, good on large graphs) and, when the problem is small
// enough for an exact MILP, CBC warm-started from the heuristic's solution for the rest of the time
// limit; it returns the better answer and CBC's bound when CBC gave one.
//
// Determinism: for a given request, seed and effort the answer is the same byte for byte. A time
// limit can stop a search earlier on a slower or busier machine, so a caller that needs
// reproducible plans (the planner) bounds the search by `effort` and uses the time limit as a
// safety net only.
#ifndef ALPA_SOLVER_SOLVE_H_
#define ALPA_SOLVER_SOLVE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "solver/request.h"
#include "support/status.h"

namespace alpa::solver {

enum class SolverKind { kAuto, kMilp, kHeuristic };
std::string_view SolverKindName(SolverKind kind);  // "auto", "cbc", "heuristic"
Result<SolverKind> ParseSolverKind(std::string_view name);

struct SolveOptions {
  SolverKind kind = SolverKind::kAuto;
  double time_limit_s = 60;
  uint64_t seed = 0;
  // A deterministic bound on the work of the heuristic (its iterations; see heuristic_solver.h);
  // absent: run until the time limit or until optimality is proven.
  std::optional<int64_t> effort;
  // The heuristic's stall: this many iterations without a better solution; absent:
  // max(200, 4 * the iterations until the last improvement). Deterministic like effort.
  std::optional<int64_t> patience;
  // At a stall the heuristic diversifies (restarts from perturbed prices, drawn from `seed`) and
  // goes on, so that it uses the whole budget; with this set it stops instead (the planner, and
  // kAuto's heuristic share when CBC follows).
  bool stop_when_stalled = false;
  // The heuristic's threads, one search each (heuristic_solver.h, step 6); the answer depends on
  // the count, not on the scheduling. CBC runs on one thread.
  int threads = 1;
  // Stop once the best solution is proven within this fraction of the optimum (WithinGap,
  // request.h; CBC's allowable fraction gap). 0: only a proof of optimality stops a search early.
  double relative_gap = 0;
  // Called whenever a better feasible solution is found: seconds since the start and its cost
  // (a terminal shows the best cost over time). May be empty.
  std::function<void(double seconds, TotalCost cost)> on_improvement;
  // A solution to start from (MILP warm start, heuristic initial incumbent); may be empty.
  std::vector<int64_t> start;
  // CBC's own log, which it prints on stdout (off: CBC is silent).
  bool milp_log = false;
};

// Validates the request, then solves it with options.kind. A request that fails validation is
// an InvalidArgument error; a problem with no feasible choice is an answer with kInfeasible (when
// proven) or kNoSolution, not an error.
Result<Answer> Solve(const Request& request, const SolveOptions& options);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_SOLVE_H_
