#include "solver/heuristic_lagrangian.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace alpa::solver {
namespace {

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
// Search i > 0 draws from seed + i * this (an odd constant: the seeds of one solve's searches are
// distinct, and search 0's is the seed itself).
constexpr uint64_t kSearchSeedStride = 0xD1B54A32D192ED03ull;

// Search i's price step is kStep times 10^-1, 10^1, 10^-2, 10^2, ... for i = 1, 2, 3, 4, ...: over
// a 100x range of the step the tight problems of the generated set kept their costs within 0.06%
// while their bounds moved by up to 3%, each problem's best at another step (docs/iopddl.md); the
// solve keeps the highest bound.
double StepScale(int index) {
  const int exponent = (index + 1) / 2;
  return std::pow(10.0, index % 2 == 1 ? -exponent : exponent);
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

// The least integer cost a bound allows: costs are integers, so the optimum is at least
// ceil(bound) (the bound's terms carry their own rounding margins).
TotalCost IntegerBound(double bound) {
  if (!std::isfinite(bound)) return std::numeric_limits<int64_t>::min();
  return static_cast<TotalCost>(std::ceil(bound));
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

}  // namespace

Diversifier::Diversifier(const HeuristicProblem& problem, uint64_t seed)
    : problem_(problem), random_(seed ^ 0x9E3779B97F4A7C15ull) {}

void Diversifier::ScatterPrices(const std::vector<double>& best, std::vector<double>& lambda) {
  for (size_t t = 0; t < lambda.size(); ++t) lambda[t] = best[t] * std::exp(2 * Uniform() - 1);
}

const std::vector<int64_t>& Diversifier::Shaken(const std::vector<int64_t>& penalty) {
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

LagrangianSearch::LagrangianSearch(const HeuristicProblem& problem, const SolveOptions& options,
                                   int index, std::function<bool()> out_of_time, Report report)
    : problem_(problem),
      options_(options),
      out_of_time_(std::move(out_of_time)),
      report_(std::move(report)),
      choiceless_(problem.unary.size() == static_cast<size_t>(problem.num_nodes)),
      best_lambda_(problem.num_times, 0.0),
      lower_bound_(CheapLowerBound(problem)),
      feasible_(problem, LeastUsageChoice(problem), /*enforce_memory=*/true),
      relaxed_(problem, feasible_.choice(), /*enforce_memory=*/false),
      trws_(problem),
      repairer_(problem),
      diversifier_(problem, options.seed + static_cast<uint64_t>(index) * kSearchSeedStride),
      lambda_(problem.num_times, 0.0),
      step_(problem.num_times, 0.0),
      step_scale_(StepScale(index)),
      noisy_until_(index == 0 ? 0 : kNoisyIterations) {
  // The incumbent: options.start when it fits, else the least-usage choice; improved by descent.
  if (std::vector<int32_t> initial = FromOriginalChoice(problem, options.start); !initial.empty()) {
    feasible_.Reset(std::move(initial));
    if (!feasible_.Fits()) feasible_.Reset(LeastUsageChoice(problem));
  }
  if (feasible_.Fits()) {
    feasible_.Descend();
    Record(feasible_);
  }
  done_ = MustStop();
}

bool LagrangianSearch::Record(const LocalSearch& search) {
  if (search.HasForbidden() || !search.Fits()) return false;
  if (found_ && search.cost() >= best_cost_) return false;
  found_ = true;
  best_ = search.choice();
  best_cost_ = search.cost();
  own_best_cost_ = best_cost_;
  best_lambda_ = lambda_;
  report_(best_cost_);
  return true;
}

void LagrangianSearch::Adopt(const LagrangianSearch& best, TotalCost lower_bound) {
  lower_bound_ = std::max(lower_bound_, lower_bound);
  if (best.found_ && (!found_ || best.best_cost_ < best_cost_)) {
    found_ = true;
    best_ = best.best_;
    best_cost_ = best.best_cost_;
    best_lambda_ = best.best_lambda_;
  }
  done_ = done_ || MustStop();
}

bool LagrangianSearch::MustStop() const {
  return choiceless_ || (found_ && WithinGap(best_cost_, lower_bound_, options_.relative_gap)) ||
         out_of_time_() || (options_.effort && iteration_ >= *options_.effort);
}

void LagrangianSearch::Run(int64_t iterations) {
  for (int64_t i = 0; i < iterations && !done_; ++i) {
    Iterate();
    done_ = done_ || MustStop();
  }
}

void LagrangianSearch::Iterate() {
  const int64_t iteration = iteration_++;
  if (iteration - last_improvement_ >
      options_.patience.value_or(std::max<int64_t>(200, 4 * (last_improvement_ - episode_)))) {
    if (options_.stop_when_stalled) {
      done_ = true;
      return;
    }
    // Diversify: prices scattered around those of the best solution, the relaxed problem's
    // costs shaken for a few iterations, the step size reset; a new episode.
    diversifier_.ScatterPrices(found_ ? best_lambda_ : lambda_, lambda_);
    theta_ = 1;
    best_lagrangian_ = -std::numeric_limits<double>::infinity();
    flat_ = 0;
    episode_ = last_improvement_ = iteration;
    noisy_until_ = iteration + kNoisyIterations;
  }
  // The relaxed problem at the current prices (shaken after a restart), and its bound.
  relaxed_.SetPrices(lambda_);
  const std::vector<int64_t>& penalty =
      iteration < noisy_until_ ? diversifier_.Shaken(relaxed_.penalty()) : relaxed_.penalty();
  relaxed_.Reset(trws_.Run(penalty, kTrwsIterations, out_of_time_));
  relaxed_.Descend();
  double lagrangian = static_cast<double>(relaxed_.cost());
  // TRW-S's bound is rounded down (Trws::LowerBound); the memory prices' terms below are summed
  // to nearest, so they carry a margin of an ulp of their operands' size per term.
  double bound = trws_.LowerBound(relaxed_.penalty());
  const int32_t num_times = problem_.num_times;
  const double limit = static_cast<double>(problem_.limit);
  if (problem_.has_limit) {
    bound -= relaxed_.penalty_excess();
    const std::vector<int64_t> usage = relaxed_.memory().Values();
    double priced = 0;  // sum_t lambda_t * (|base_t| + L): the size of the terms added below
    for (int32_t t = 0; t < num_times; ++t) {
      step_[t] = static_cast<double>(usage[t]) - limit;
      lagrangian += lambda_[t] * step_[t];
      const double base = static_cast<double>(problem_.base_usage[t]);
      bound += lambda_[t] * (base - limit);
      priced += lambda_[t] * (std::abs(base) + limit);
    }
    bound -= std::numeric_limits<double>::epsilon() *
             (static_cast<double>(num_times + 4) * priced + std::abs(bound));
  }
  lower_bound_ = std::max(lower_bound_, IntegerBound(bound));
  // A feasible solution from it.
  if (repairer_.Repair(relaxed_, kRepairSteps, out_of_time_)) {
    feasible_.Reset(relaxed_.choice());
    feasible_.SetPrices(lambda_);
    feasible_.Descend();
    if (Record(feasible_)) last_improvement_ = iteration;
  }
  if (!problem_.has_limit) return;
  // Prices towards feasibility.
  if (lagrangian > best_lagrangian_) {
    best_lagrangian_ = lagrangian;
    flat_ = 0;
  } else if (++flat_ >= 3) {
    flat_ = 0;
    theta_ /= 2;
    if (theta_ < 1.0 / 64) {
      theta_ = 1;
      best_lagrangian_ = -std::numeric_limits<double>::infinity();
    }
  }
  // The search's own best, not an adopted one: its prices keep their own course (on one thread
  // the two are the same).
  const double scale =
      own_best_cost_.has_value() ? static_cast<double>(*own_best_cost_) : std::abs(lagrangian);
  const double unit = theta_ * std::max(scale, 1.0) / (std::max(limit, 1.0) * num_times);
  for (int32_t t = 0; t < num_times; ++t) {
    const double next = lambda_[t] + step_scale_ * kStep * unit * step_[t] / std::max(limit, 1.0);
    lambda_[t] = std::clamp(next, 0.5 * lambda_[t], 2 * lambda_[t] + unit);
  }
}

const LagrangianSearch& Cheapest(const std::vector<std::unique_ptr<LagrangianSearch>>& searches) {
  const LagrangianSearch* cheapest = searches.front().get();
  for (const auto& search : searches) {
    if (search->found() && (!cheapest->found() || search->best_cost() < cheapest->best_cost())) {
      cheapest = search.get();
    }
  }
  return *cheapest;
}

bool Exchange(const std::vector<std::unique_ptr<LagrangianSearch>>& searches) {
  const LagrangianSearch& cheapest = Cheapest(searches);
  TotalCost bound = cheapest.lower_bound();
  for (const auto& search : searches) bound = std::max(bound, search->lower_bound());
  bool all_done = true;
  for (const auto& search : searches) {
    search->Adopt(cheapest, bound);
    all_done = all_done && search->done();
  }
  return all_done;
}

}  // namespace alpa::solver
