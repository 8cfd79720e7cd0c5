#include "solver/heuristic_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "solver/heuristic_problem.h"
#include "solver/heuristic_repair.h"
#include "solver/heuristic_search.h"
#include "solver/heuristic_trws.h"

namespace alpa::solver {
namespace {

using Clock = std::chrono::steady_clock;

// TRW-S passes per iteration (warm-started, so a few suffice), the price step in units (tuned on
// the contest's instances: 1000-3000 all land within 3% on S, 10-100 far worse), and the greedy
// repair's move limit.
constexpr int kTrwsIterations = 5;
constexpr double kStep = 3000;
constexpr int64_t kRepairSteps = 1'000'000;
// After a stall the relaxed problem is solved with shaken costs this many iterations, each cost
// moved by up to this share of its node's spread (heuristic_solver.h, step 4).
constexpr int64_t kNoisyIterations = 3;
constexpr double kShake = 0.3;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Per node the strategy of least usage (then least cost); the items' usages are weighted by
// their lengths, exact for a node with one item.
std::vector<int32_t> LeastUsageChoice(const HeuristicProblem& p) {
  std::vector<int32_t> choice(p.num_nodes, 0);
  std::vector<int64_t> total;
  for (int32_t v = 0; v < p.num_nodes; ++v) {
    total.assign(p.num_strategies(v), 0);
    for (int64_t i = p.item_begin[v]; i < p.item_begin[v + 1]; ++i) {
      for (int32_t s = 0; s < p.num_strategies(v); ++s) {
        total[s] += p.usage[p.item_usage[i] + s] * (p.item_hi[i] - p.item_lo[i]);
      }
    }
    const int64_t base = p.strategy_begin[v];
    for (int32_t s = 1; s < p.num_strategies(v); ++s) {
      const int32_t b = choice[v];
      if (total[s] < total[b] || (total[s] == total[b] && p.unary[base + s] < p.unary[base + b])) {
        choice[v] = s;
      }
    }
  }
  return choice;
}

// Every node at its cheapest strategy and every edge at its cheapest entry: a valid lower bound
// of the reduced problem, hence of the Request (the reductions are exact).
TotalCost CheapLowerBound(const HeuristicProblem& p) {
  TotalCost bound = 0;
  for (int32_t v = 0; v < p.num_nodes; ++v) {
    bound += *std::min_element(p.unary.begin() + p.strategy_begin[v],
                               p.unary.begin() + p.strategy_begin[v + 1]);
    for (int64_t a = p.adj_begin[v]; a < p.adj_begin[v + 1]; ++a) {
      if (p.adj_node[a] < v) continue;
      const int64_t cells = int64_t{p.num_strategies(v)} * p.num_strategies(p.adj_node[a]);
      const auto first = p.matrices.begin() + p.adj_matrix[a];
      bound += *std::min_element(first, first + cells);
    }
  }
  return bound;
}

// The least integer cost a bound allows: costs are integers, so the optimum is at least
// ceil(bound) (the bound's terms carry their own rounding margins).
TotalCost IntegerBound(double bound) {
  if (!std::isfinite(bound)) return std::numeric_limits<int64_t>::min();
  return static_cast<TotalCost>(std::ceil(bound));
}

// The restarts' randomness, drawn from options.seed (mt19937_64's sequence is fixed by the
// standard, and the draws are mapped to [0, 1) by hand, so a seed gives the same search on every
// platform).
class Diversifier {
 public:
  Diversifier(const HeuristicProblem& problem, uint64_t seed)
      : problem_(problem), random_(seed ^ 0x9E3779B97F4A7C15ull) {}

  // lambda_t = best_t * e^u with u uniform in [-1, 1): each price moves up to a factor e.
  void ScatterPrices(const std::vector<double>& best, std::vector<double>& lambda) {
    for (size_t t = 0; t < lambda.size(); ++t) lambda[t] = best[t] * std::exp(2 * Uniform() - 1);
  }

  // `penalty` plus up to kShake of each node's spread of unary costs, per strategy: TRW-S then
  // starts from other labellings, while the bound and the feasible search keep the true costs.
  const std::vector<int64_t>& Shaken(const std::vector<int64_t>& penalty) {
    shaken_ = penalty;
    for (int32_t v = 0; v < problem_.num_nodes; ++v) {
      const auto first = problem_.unary.begin() + problem_.strategy_begin[v];
      const auto last = problem_.unary.begin() + problem_.strategy_begin[v + 1];
      const auto [least, most] = std::minmax_element(first, last);
      const double spread = static_cast<double>(*most - *least);
      for (int64_t i = problem_.strategy_begin[v]; i < problem_.strategy_begin[v + 1]; ++i) {
        shaken_[i] += std::llround(kShake * spread * Uniform());
      }
    }
    return shaken_;
  }

 private:
  double Uniform() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }

  const HeuristicProblem& problem_;
  std::mt19937_64 random_;
  std::vector<int64_t> shaken_;
};

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

  bool found = false;
  std::vector<int32_t> best;
  int64_t best_cost = 0;
  auto record = [&](const LocalSearch& search) {
    if (search.HasForbidden() || !search.Fits()) return false;
    if (found && search.cost() >= best_cost) return false;
    found = true;
    best = search.choice();
    best_cost = search.cost();
    if (options.on_improvement) options.on_improvement(Seconds(start), TotalCost{best_cost});
    return true;
  };

  // The incumbent: options.start when it fits, else the least-usage choice; improved by descent.
  LocalSearch feasible(problem, LeastUsageChoice(problem), /*enforce_memory=*/true);
  if (std::vector<int32_t> initial = FromOriginalChoice(problem, options.start); !initial.empty()) {
    feasible.Reset(std::move(initial));
    if (!feasible.Fits()) feasible.Reset(LeastUsageChoice(problem));
  }
  if (feasible.Fits()) {
    feasible.Descend();
    record(feasible);
  }

  TotalCost lower_bound = CheapLowerBound(problem);
  const bool choiceless = problem.unary.size() == static_cast<size_t>(problem.num_nodes);
  LocalSearch relaxed(problem, feasible.choice(), /*enforce_memory=*/false);
  Trws trws(problem);
  Repairer repairer(problem);
  Diversifier diversifier(problem, options.seed);
  const int32_t num_times = problem.num_times;
  const double limit = static_cast<double>(problem.limit);
  std::vector<double> lambda(num_times, 0.0), best_lambda(num_times, 0.0);
  std::vector<double> step(num_times, 0.0);
  double theta = 1, best_lagrangian = -std::numeric_limits<double>::infinity();
  int flat = 0;  // iterations the Lagrangian value has not risen
  // An episode runs from the start or a restart; it stalls after `patience` iterations without a
  // better solution (by default 4x the iterations it took to its last improvement, at least 200).
  int64_t episode = 0, last_improvement = 0, noisy_until = 0;
  for (int64_t iteration = 0;; ++iteration) {
    if (choiceless || (found && WithinGap(best_cost, lower_bound, options.relative_gap)) ||
        out_of_time() || (options.effort && iteration >= *options.effort)) {
      break;
    }
    if (iteration - last_improvement >
        options.patience.value_or(std::max<int64_t>(200, 4 * (last_improvement - episode)))) {
      if (options.stop_when_stalled) break;
      // Diversify: prices scattered around those of the best solution, the relaxed problem's
      // costs shaken for a few iterations, the step size reset; a new episode.
      diversifier.ScatterPrices(found ? best_lambda : lambda, lambda);
      theta = 1;
      best_lagrangian = -std::numeric_limits<double>::infinity();
      flat = 0;
      episode = last_improvement = iteration;
      noisy_until = iteration + kNoisyIterations;
    }
    // The relaxed problem at the current prices (shaken after a restart), and its bound.
    relaxed.SetPrices(lambda);
    const std::vector<int64_t>& penalty =
        iteration < noisy_until ? diversifier.Shaken(relaxed.penalty()) : relaxed.penalty();
    relaxed.Reset(trws.Run(penalty, kTrwsIterations, out_of_time));
    relaxed.Descend();
    double lagrangian = static_cast<double>(relaxed.cost());
    // TRW-S's bound is rounded down (Trws::LowerBound); the memory prices' terms below are
    // summed to nearest, so they carry a margin of an ulp of their operands' size per term.
    double bound = trws.LowerBound(relaxed.penalty());
    if (problem.has_limit) {
      bound -= relaxed.penalty_excess();
      const std::vector<int64_t> usage = relaxed.memory().Values();
      double priced = 0;  // sum_t lambda_t * (|base_t| + L): the size of the terms added below
      for (int32_t t = 0; t < num_times; ++t) {
        step[t] = static_cast<double>(usage[t]) - limit;
        lagrangian += lambda[t] * step[t];
        const double base = static_cast<double>(problem.base_usage[t]);
        bound += lambda[t] * (base - limit);
        priced += lambda[t] * (std::abs(base) + limit);
      }
      bound -= std::numeric_limits<double>::epsilon() *
               (static_cast<double>(num_times + 4) * priced + std::abs(bound));
    }
    lower_bound = std::max(lower_bound, IntegerBound(bound));
    // A feasible solution from it.
    if (repairer.Repair(relaxed, kRepairSteps, out_of_time)) {
      feasible.Reset(relaxed.choice());
      feasible.SetPrices(lambda);
      feasible.Descend();
      if (record(feasible)) {
        last_improvement = iteration;
        best_lambda = lambda;
      }
    }
    if (!problem.has_limit) continue;
    // Prices towards feasibility.
    if (lagrangian > best_lagrangian) {
      best_lagrangian = lagrangian;
      flat = 0;
    } else if (++flat >= 3) {
      flat = 0;
      theta /= 2;
      if (theta < 1.0 / 64) {
        theta = 1;
        best_lagrangian = -std::numeric_limits<double>::infinity();
      }
    }
    const double scale = !found ? std::abs(lagrangian) : static_cast<double>(best_cost);
    const double unit = theta * std::max(scale, 1.0) / (std::max(limit, 1.0) * num_times);
    for (int32_t t = 0; t < num_times; ++t) {
      const double next = lambda[t] + kStep * unit * step[t] / std::max(limit, 1.0);
      lambda[t] = std::clamp(next, 0.5 * lambda[t], 2 * lambda[t] + unit);
    }
  }

  answer.seconds = Seconds(start);
  answer.lower_bound = lower_bound;
  if (!found) return answer;
  answer.choice = ToOriginalChoice(problem, best);
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
