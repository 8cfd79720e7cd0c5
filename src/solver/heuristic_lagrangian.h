// One search of the heuristic solver (heuristic_solver.h, steps 2-4): memory prices, TRW-S on the
// relaxed problem, repair and descent to a feasible solution, the Lagrangian bound, restarts at
// a stall. SolveHeuristic runs one per thread, in rounds of a fixed number of iterations; between
// two rounds the searches exchange their best solution and bound (Adopt), so that the result
// depends on the thread count and the seed, never on how the threads were scheduled.
#ifndef ALPA_SOLVER_HEURISTIC_LAGRANGIAN_H_
#define ALPA_SOLVER_HEURISTIC_LAGRANGIAN_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "solver/heuristic_problem.h"
#include "solver/heuristic_repair.h"
#include "solver/heuristic_search.h"
#include "solver/heuristic_trws.h"
#include "solver/solve.h"

namespace alpa::solver {

// The restarts' randomness, drawn from a seed (mt19937_64's sequence is fixed by the standard,
// and the draws are mapped to [0, 1) by hand, so a seed gives the same search on every platform).
class Diversifier {
 public:
  Diversifier(const HeuristicProblem& problem, uint64_t seed);

  // lambda_t = best_t * e^u with u uniform in [-1, 1): each price moves up to a factor e.
  void ScatterPrices(const std::vector<double>& best, std::vector<double>& lambda);

  // `penalty` plus up to 30% of each node's spread of unary costs, per strategy: TRW-S then
  // starts from other labellings, while the bound and the feasible search keep the true costs.
  const std::vector<int64_t>& Shaken(const std::vector<int64_t>& penalty);

 private:
  double Uniform() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }

  const HeuristicProblem& problem_;
  std::mt19937_64 random_;
  std::vector<int64_t> shaken_;
};

class LagrangianSearch {
 public:
  // Called, on the search's own thread, with the cost whenever the search finds a solution
  // cheaper than its own best (the driver reports those that beat every search's best).
  using Report = std::function<void(int64_t cost)>;

  // Search `index` of a solve: index 0 is the search a single thread runs; index i > 0 draws its
  // restarts from a seed of its own, begins with shaken costs and moves its prices with a step
  // 10 or 100 times smaller or larger, so that no two searches walk the same path and their
  // bounds come from different prices. `out_of_time` is polled between and inside iterations.
  LagrangianSearch(const HeuristicProblem& problem, const SolveOptions& options, int index,
                   std::function<bool()> out_of_time, Report report);

  // Runs up to `iterations` more iterations; fewer when the search is done().
  void Run(int64_t iterations);
  // Out of time or effort, within options.relative_gap of the bound, stalled under
  // options.stop_when_stalled, or nothing left to choose.
  bool done() const { return done_; }

  bool found() const { return found_; }
  int64_t best_cost() const { return best_cost_; }
  const std::vector<int32_t>& best() const { return best_; }
  TotalCost lower_bound() const { return lower_bound_; }

  // Takes `best`'s solution (with the prices that led to it, the centre of this search's next
  // restart) when it is cheaper than this search's own, and `lower_bound` when it is higher.
  // `best` may be this search.
  void Adopt(const LagrangianSearch& best, TotalCost lower_bound);

 private:
  // One iteration of heuristic_solver.h's step 3 (and step 4 at a stall).
  void Iterate();
  // Keeps `search`'s choice when it is feasible and cheaper than the best; says whether it was.
  bool Record(const LocalSearch& search);
  // Whether the search must stop before its next iteration.
  bool MustStop() const;

  const HeuristicProblem& problem_;
  const SolveOptions& options_;
  const std::function<bool()> out_of_time_;
  const Report report_;
  const bool choiceless_;

  bool found_ = false;
  int64_t best_cost_ = 0;
  std::vector<int32_t> best_;
  std::vector<double> best_lambda_;  // the prices of the iteration that found best_
  TotalCost lower_bound_;

  LocalSearch feasible_;
  LocalSearch relaxed_;
  Trws trws_;
  Repairer repairer_;
  Diversifier diversifier_;
  std::vector<double> lambda_, step_;
  std::optional<int64_t> own_best_cost_;  // of the solutions this search found itself
  const double step_scale_;               // of the price step: 1 for search 0 (StepScale)
  double theta_ = 1, best_lagrangian_ = -std::numeric_limits<double>::infinity();
  int flat_ = 0;  // iterations the Lagrangian value has not risen
  // An episode runs from the start or a restart; it stalls after `patience` iterations without a
  // better solution (by default 4x the iterations it took to its last improvement, at least 200).
  int64_t iteration_ = 0, episode_ = 0, last_improvement_ = 0, noisy_until_ = 0;
  bool done_ = false;
};

// The search with the cheapest solution (the lowest index among equals, so that the exchange
// does not depend on which thread finished first); the first when none has one.
const LagrangianSearch& Cheapest(const std::vector<std::unique_ptr<LagrangianSearch>>& searches);

// Every search takes the cheapest solution and the highest bound (the cheapest one too: its bound
// may not be the highest); says whether all are done.
bool Exchange(const std::vector<std::unique_ptr<LagrangianSearch>>& searches);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_LAGRANGIAN_H_
