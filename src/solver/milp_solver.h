// The exact solver: the MILP of milp_model.h solved by CBC (COIN-OR branch and cut, through its C
// interface Cbc_C_Interface.h; the bare CbcModel::branchAndBound path was 30-100x slower).
//
// CBC runs single-threaded with its log off (SolveOptions::milp_log turns it on, on stdout), from
// options.start when that is a feasible choice (Cbc_setMIPStartI; CBC's preprocessing is then
// off, see milp_solver.cc), for at most options.time_limit_s of wall time in all (presolve and
// model building included). CBC reads its clock only between its own steps: on the contest's
// instances A, M and S (2-3 million columns) its first LP alone runs for many minutes, and on B
// (91k columns) the LP and the start's evaluation take 3.4 s whatever the limit. So CBC runs in a
// child process (support/child_process.h) that is killed half a second past the limit; what it
// had found is then lost and the answer is the start (or kNoSolution). At the limit CBC returns
// its incumbent as kFeasible with its bound as the lower bound; kOptimal when it closed the gap
// (or, from a start, found nothing below the start's cost); kInfeasible when the presolve or CBC
// proved that no choice is feasible.
//
// CBC works in doubles: objective terms of 1e18 and sums past 2^53 are rounded. So the answer's
// cost is recomputed exactly by the checker, optimality is claimed only below 2^53, and a choice
// the checker finds forbidden or over the memory limit (CBC's tolerances) is never returned: the
// answer then falls back to options.start when that is feasible, else kNoSolution.
// options.on_improvement is called once, with the final cost, when it beats options.start (CBC's
// C interface offers no incumbent callback without also printing its log on stdout).
#ifndef ALPA_SOLVER_MILP_SOLVER_H_
#define ALPA_SOLVER_MILP_SOLVER_H_

#include <cstdint>

#include "solver/request.h"
#include "solver/solve.h"
#include "support/status.h"

namespace alpa::solver {

// Above this many MILP columns (s and e, after the presolve) kAuto does not try CBC. Measured on
// the contest's instances (shared/iopddl): B (91k columns) and G (78k) are proven optimal from the
// heuristic's solution in 5-15 s of CPU; A, M and S (2.0-3.3 million columns) take seconds just
// to build and CBC does not finish their root LP within the contest's time limits.
inline constexpr int64_t kMilpAutoColumnLimit = 200'000;

// Solves a valid request.
Result<Answer> SolveMilp(const Request& request, const SolveOptions& options);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_MILP_SOLVER_H_
