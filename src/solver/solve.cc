#include "solver/solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "solver/checker.h"
#include "solver/heuristic_solver.h"
#include "solver/milp_model.h"
#include "solver/milp_solver.h"

namespace alpa::solver {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// kAuto's share of the time limit for the heuristic when CBC runs after it. The heuristic stops
// at its first stall (the contest's B and G: within 3 s, at or one unit above the optimum), and
// CBC gets the rest to improve the solution and prove a bound.
constexpr double kAutoHeuristicShare = 0.3;

// More threads than any machine we plan for has cores; a larger count is a typo.
constexpr int kMaxThreads = 1024;

// The checker's verdict on a solver's answer: the cost recomputed exactly, and a choice that is
// forbidden or over the memory limit dropped (the answer then has no solution). A malformed choice
// is a bug of that solver.
Result<Answer> Verify(const Request& request, Answer answer) {
  if (!answer.has_solution()) {
    answer.choice.clear();
    return answer;
  }
  Result<Evaluation> evaluation = EvaluateChoice(request, answer.choice);
  if (!evaluation.ok()) {
    return Internal("the {} solver returned a malformed choice: {}", answer.solver,
                    evaluation.status().message());
  }
  if (!evaluation->feasible()) {
    answer.status = SolveStatus::kNoSolution;
    answer.choice.clear();
    answer.cost = 0;
    return answer;
  }
  answer.cost = evaluation->cost;
  return answer;
}

// The heuristic, then CBC from its solution for the rest of the time when the MILP is small
// enough (milp_solver.h, kMilpAutoColumnLimit).
Result<Answer> SolveAuto(const Request& request, const SolveOptions& options) {
  const Clock::time_point begin = Clock::now();
  const bool with_milp = CountMilpColumns(request) <= kMilpAutoColumnLimit;
  // Progress from both solvers on one clock, only when the best cost improves.
  std::optional<TotalCost> best;
  SolveOptions heuristic_options = options;
  if (options.on_improvement) {
    heuristic_options.on_improvement = [&](double, TotalCost cost) {
      if (best.has_value() && cost >= *best) return;
      best = cost;
      options.on_improvement(SecondsSince(begin), cost);
    };
  }
  if (with_milp) {
    heuristic_options.time_limit_s = options.time_limit_s * kAutoHeuristicShare;
    heuristic_options.stop_when_stalled = true;
  }
  ALPA_ASSIGN_OR_RETURN(Answer heuristic, SolveHeuristic(request, heuristic_options));
  ALPA_ASSIGN_OR_RETURN(Answer answer, Verify(request, std::move(heuristic)));
  const double left = options.time_limit_s - SecondsSince(begin);
  if (!with_milp || left <= 0 || answer.ProvenWithin(options.relative_gap)) return answer;

  SolveOptions milp_options = heuristic_options;
  milp_options.time_limit_s = left;
  if (answer.has_solution()) milp_options.start = answer.choice;
  ALPA_ASSIGN_OR_RETURN(Answer milp, SolveMilp(request, milp_options));
  ALPA_ASSIGN_OR_RETURN(milp, Verify(request, std::move(milp)));
  if (milp.status == SolveStatus::kInfeasible && !answer.has_solution()) return milp;
  // Both solvers' bounds hold for either's solution: keep the larger.
  std::optional<TotalCost> bound = answer.lower_bound;
  if (milp.lower_bound.has_value()) bound = std::max(*milp.lower_bound, bound.value_or(0));
  if (milp.has_solution() && (!answer.has_solution() || milp.cost < answer.cost)) {
    answer = std::move(milp);
  }
  answer.lower_bound = bound;
  if (answer.has_solution() && bound.has_value() && *bound >= answer.cost) {
    answer.status = SolveStatus::kOptimal;
    answer.lower_bound = answer.cost;
  }
  return answer;
}

}  // namespace

std::string_view SolverKindName(SolverKind kind) {
  switch (kind) {
    case SolverKind::kAuto:
      return "auto";
    case SolverKind::kMilp:
      return "cbc";
    case SolverKind::kHeuristic:
      return "heuristic";
  }
  return "unknown";
}

Result<SolverKind> ParseSolverKind(std::string_view name) {
  if (name == "auto") return SolverKind::kAuto;
  if (name == "cbc" || name == "milp") return SolverKind::kMilp;
  if (name == "heuristic") return SolverKind::kHeuristic;
  return InvalidArgument("unknown solver '{}'; expected auto, cbc (also called milp) or heuristic",
                         name);
}

Result<Answer> Solve(const Request& request, const SolveOptions& options) {
  const Clock::time_point begin = Clock::now();
  ALPA_RETURN_IF_ERROR(ValidateRequest(request));
  if (!(options.time_limit_s > 0) || !std::isfinite(options.time_limit_s)) {
    return InvalidArgument("time limit {} s: must be a positive number of seconds",
                           options.time_limit_s);
  }
  if (options.threads < 1 || options.threads > kMaxThreads) {
    return InvalidArgument("{} threads: must be 1 to {}", options.threads, kMaxThreads);
  }
  if (!options.start.empty()) {
    Status start = EvaluateChoice(request, options.start).status();
    if (!start.ok()) return start.WithContext("the start");
  }
  Result<Answer> answer = [&]() -> Result<Answer> {
    switch (options.kind) {
      case SolverKind::kHeuristic:
        return SolveHeuristic(request, options);
      case SolverKind::kMilp:
        return SolveMilp(request, options);
      case SolverKind::kAuto:
        return SolveAuto(request, options);
    }
    return Internal("unknown solver kind {}", static_cast<int>(options.kind));
  }();
  if (!answer.ok()) return answer;
  ALPA_ASSIGN_OR_RETURN(Answer verified, Verify(request, std::move(*answer)));
  verified.seconds = SecondsSince(begin);
  return verified;
}

}  // namespace alpa::solver
