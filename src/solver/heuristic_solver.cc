#include "solver/heuristic_solver.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "solver/heuristic_lagrangian.h"
#include "solver/heuristic_problem.h"

namespace alpa::solver {
namespace {

using Clock = std::chrono::steady_clock;

// Iterations each search runs between two exchanges of the best solution and bound: often enough
// that a search restarts from the best prices found by any (a stall takes 200 iterations or
// more), rarely enough that the threads seldom wait for each other at the barrier.
constexpr int64_t kRoundIterations = 8;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

Result<Answer> SolveHeuristic(const Request& request, const SolveOptions& options) {
  const Clock::time_point start = Clock::now();
  Answer answer;
  answer.solver = "heuristic";
  const HeuristicProblem problem = BuildHeuristicProblem(request);
  if (problem.infeasible) {
    answer.status = SolveStatus::kInfeasible;
    answer.seconds = Seconds(start);
    return answer;
  }
  auto out_of_time = [&] { return Seconds(start) >= options.time_limit_s; };
  // Progress: a solution cheaper than any search's before it, reported once.
  std::mutex progress_mutex;
  std::optional<int64_t> reported;
  auto report = [&](int64_t cost) {
    if (!options.on_improvement) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    if (reported.has_value() && cost >= *reported) return;
    reported = cost;
    options.on_improvement(Seconds(start), TotalCost{cost});
  };

  // One search per thread, in rounds: each thread builds its search, then runs kRoundIterations
  // of it per round; the barrier's completion step (on one thread, the others waiting) exchanges
  // the solutions and decides whether another round follows.
  const int num_searches = std::max(options.threads, 1);
  std::vector<std::unique_ptr<LagrangianSearch>> searches(num_searches);
  bool finished = false;
  std::barrier round(num_searches, [&]() noexcept { finished = Exchange(searches); });
  auto run = [&](int index) {
    searches[index] =
        std::make_unique<LagrangianSearch>(problem, options, index, out_of_time, report);
    round.arrive_and_wait();
    while (!finished) {
      searches[index]->Run(kRoundIterations);
      round.arrive_and_wait();
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (int index = 1; index < num_searches; ++index) helpers.emplace_back(run, index);
    run(0);
  }

  const LagrangianSearch& cheapest = Cheapest(searches);
  const TotalCost lower_bound = cheapest.lower_bound();  // every search holds the highest
  answer.seconds = Seconds(start);
  answer.lower_bound = lower_bound;
  if (!cheapest.found()) return answer;
  answer.choice = ToOriginalChoice(problem, cheapest.best());
  const ChoiceCheck check = CheckChoice(request, answer.choice);
  if (!check.feasible) {
    answer.choice.clear();
    return answer;
  }
  answer.cost = check.cost;
  answer.status = check.cost <= lower_bound ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  if (answer.status == SolveStatus::kOptimal) answer.lower_bound = check.cost;
  return answer;
}

}  // namespace alpa::solver
