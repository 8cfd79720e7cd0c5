// Our own fast solver for the auto-sharding problem (request.h): Lagrangian relaxation of the
// memory limit, message passing for the relaxed problem, and greedy repair plus local search for
// feasible solutions. Deterministic: the same request, options.start, options.effort,
// options.seed and options.threads give the same answer (the seed draws the restarts of step 4).
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
//    The iteration's lower bound: for every choice s that fits, lambda >= 0 gives
//      cost(s) >= f(s) - sum_t lambda_t * L >= TRW-S's bound on min f - sum_t lambda_t * L
//    (weak duality; Trws::LowerBound, less what rounding the penalties to integers added).
//    The best over all iterations is the answer's bound.
// 4. A stall: options.patience iterations without a better solution (by default 4x the
//    iterations the episode took to its last improvement, at least 200). Unless
//    options.stop_when_stalled, a stall starts a new episode instead of stopping: prices
//    scattered around those of the best solution (each times e^u, u uniform in [-1, 1)), the
//    relaxed problem's node costs shaken for three iterations (up to 30% of each node's spread),
//    theta back to 1.
// 5. Stop at options.time_limit_s, after options.effort iterations, when the best cost meets the
//    bound (proven optimal) or is within options.relative_gap of it, or at a stall when asked to.
// 6. With options.threads = n > 1, n searches of steps 2-5 (heuristic_lagrangian.h) run on n
//    threads. Search 0 is the single-threaded search; search i > 0 draws its restarts from its
//    own seed, starts from shaken costs and steps its prices 10^-1, 10^1, 10^-2, ... times as
//    far, so that the searches' bounds come from different prices. Every 8 iterations all meet
//    at a barrier and each takes the cheapest solution found (with its prices, where its next
//    restart scatters) and the highest bound; a search's price step keeps following the cost of
//    its own best solution. The exchanges happen at fixed iteration counts, so a thread count,
//    seed and effort give the same answer however the threads are scheduled.
//
// One unit of options.effort is one iteration of step 3 (of each search). The answer is kOptimal
// when the reduced problem has no choice left or the best cost meets the bound (the cheap one,
// every node and edge at its least cost, or the Lagrangian one), kFeasible otherwise; kNoSolution
// if no repair succeeded in time. Its lower_bound is the better of the two bounds.
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
