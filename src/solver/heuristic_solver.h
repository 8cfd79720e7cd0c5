// Our own fast solver for the auto-sharding problem (request.h): Lagrangian relaxation of the
// memory limit, message passing for the relaxed problem, and greedy repair plus local search for
// feasible solutions. Deterministic: the same request, options.start and options.effort give the
// same answer (options.seed does not change the search).
//
// 1. Reduce (heuristic_reduce.h): drop forbidden strategies (arc consistency), fold
//    single-strategy nodes, contract edges that fix one end's strategy given the other's, fold
//    memory-free leaves. The contest's instances shrink 5-100x (A: 35k nodes -> 283 with a
//    choice). Infeasibility is proven when a node loses every strategy or when the least
//    possible usage exceeds the limit at some time point.
// 2. Price memory: a price lambda_t >= 0 per time point turns the limit into node costs,
//      f(s) = cost(s) + sum_t lambda_t * usage_t(s),
//    a pairwise problem without constraints (the Lagrangian relaxation).
// 3. Each iteration: solve the relaxed problem with TRW-S (heuristic_trws.h, warm-started) and a
//    node-wise descent on f; take its usage profile U; repair a copy into the limit
//    (heuristic_repair.h) and improve it by descent with the limit enforced; keep the best.
//    Then move the prices towards feasibility, a subgradient step clamped multiplicatively:
//      lambda_t <- clamp(lambda_t + theta * kStep * unit * (U_t - L) / L,
//                        lambda_t / 2, 2 * lambda_t + theta * unit),
//    with unit = best cost / (L * T) (the price at which memory would cost as much as the best
//    solution) and theta halved whenever the Lagrangian value f(s) - sum_t lambda_t * L has not
//    risen for three iterations, back to 1 after six halvings. The clamps keep one solution that
//    fits everywhere (all steps negative) from wiping the prices out, and let prices grow
//    geometrically where the limit keeps breaking.
// 4. Stop at options.time_limit_s, after options.effort iterations, or when the search is
//    exhausted: no better solution for options.patience iterations (by default
//    max(200, 4 * (iterations until the last one))).
//
// One unit of options.effort is one iteration of step 3. The answer is kOptimal when the reduced
// problem has no choice left or the best cost meets the cheap lower bound (every node and edge at
// its least cost), kFeasible otherwise; kNoSolution if no repair succeeded in time.
#ifndef ALPA_SOLVER_HEURISTIC_SOLVER_H_
#define ALPA_SOLVER_HEURISTIC_SOLVER_H_

#include "solver/request.h"
#include "solver/solve.h"
#include "support/status.h"

namespace alpa::solver {

// Solves `request` (assumed valid: ValidateRequest passed) within options.time_limit_s and
// options.effort, starting from options.start when it is a feasible choice.
Result<Answer> SolveHeuristic(const Request& request, const SolveOptions& options);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_SOLVER_H_
