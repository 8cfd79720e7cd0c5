#include "tools/alpa/solve_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "solver/checker.h"
#include "solver/iopddl_json.h"
#include "solver/request.h"
#include "solver/search_progress.h"
#include "solver/solve.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

using solver::Answer;
using solver::Evaluation;
using solver::Improvement;
using solver::Request;
using solver::TotalCost;
using Json = nlohmann::ordered_json;

// A 128-bit total as JSON: an integer when it fits in int64, else its decimal string.
Json TotalJson(TotalCost value) {
  if (value >= std::numeric_limits<int64_t>::min() &&
      value <= std::numeric_limits<int64_t>::max()) {
    return static_cast<int64_t>(value);
  }
  return solver::TotalCostString(value);
}

Json OptionalTotalJson(const std::optional<TotalCost>& value) {
  return value.has_value() ? TotalJson(*value) : Json(nullptr);
}

// (cost - bound) / cost, the relative gap; 0 for a zero cost with a zero bound.
std::optional<double> Gap(const Answer& answer) {
  if (!answer.has_solution() || !answer.lower_bound.has_value()) return std::nullopt;
  if (answer.cost == 0) return 0.0;
  return static_cast<double>(answer.cost - *answer.lower_bound) / static_cast<double>(answer.cost);
}

// Searches get at least this long when loading took the whole limit.
constexpr double kLeastSearchSeconds = 0.1;

// When the best cost first came within 1% of the final one (seconds since loading began).
std::optional<double> WithinOnePercent(const Answer& answer,
                                       const std::vector<Improvement>& improvements) {
  if (!answer.has_solution()) return std::nullopt;
  return solver::FirstWithin(improvements, answer.cost, 0.01);
}

// Every node at its least usage among the strategies its own cost allows: no allowed choice
// peaks lower, so when this peak is over the limit no choice fits, and it says where.
Result<Evaluation> LeastUsageEvaluation(const Request& request) {
  std::vector<int64_t> choice(request.nodes.size(), 0);
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    const solver::Node& node = request.nodes[v];
    for (size_t s = 1; s < node.usages.size(); ++s) {
      const bool allowed = node.costs[s] < solver::kForbiddenCost;
      const bool best_allowed = node.costs[choice[v]] < solver::kForbiddenCost;
      if ((allowed && !best_allowed) ||
          (allowed == best_allowed && node.usages[s] < node.usages[choice[v]])) {
        choice[v] = static_cast<int64_t>(s);
      }
    }
  }
  return solver::EvaluateChoice(request, choice);
}

// Why a proven-infeasible problem has no solution, from its least possible peak.
std::string InfeasibleReason(const Request& request, const Evaluation& least_peak) {
  if (!request.usage_limit.has_value()) return "every choice takes a forbidden entry";
  const std::string peak = fmt::format(
      "{} at time {}", solver::TotalCostString(least_peak.peak_usage), least_peak.peak_time);
  if (least_peak.peak_usage > *request.usage_limit) {
    return fmt::format(
        "no choice fits the memory limit {}: the least possible peak is {}; raise the limit or "
        "allow strategies that use less memory",
        *request.usage_limit, peak);
  }
  return fmt::format(
      "every choice within the memory limit takes a forbidden entry (with every node at its "
      "least usage the peak is {}, under the limit, but forbidden edge entries rule those "
      "choices out)",
      peak);
}

int64_t TotalStrategies(const Request& request) {
  int64_t total = 0;
  for (const solver::Node& node : request.nodes) total += node.num_strategies();
  return total;
}

struct Report {
  const SolveCommandOptions& options;
  const Request& request;
  const Answer& answer;
  const Evaluation& evaluation;  // of answer.choice; all zero without a choice
  double load_s;
  const std::vector<Improvement>& improvements;
  // Without a solution: every node at its least usage among its allowed strategies.
  std::optional<Evaluation> least_peak;
};

std::string TextReport(const Report& r) {
  const Answer& answer = r.answer;
  const bool solved = answer.has_solution();
  std::string out;
  out += fmt::format("problem      {}: {} nodes ({} strategies), {} edges\n",
                     r.request.name.empty() ? r.options.problem : r.request.name,
                     r.request.nodes.size(), TotalStrategies(r.request), r.request.edges.size());
  out += fmt::format("solver       {}{}{}\n", r.options.solver,
                     r.options.threads > 1 ? fmt::format(", {} threads", r.options.threads) : "",
                     solved ? fmt::format(" (solution from {})", answer.solver) : "");
  out += fmt::format("status       {}\n", solver::SolveStatusName(answer.status));
  out += fmt::format("cost         {}\n", solved ? solver::TotalCostString(answer.cost)
                                                 : "none (no feasible solution found)");
  if (answer.lower_bound.has_value()) {
    const std::optional<double> gap = Gap(answer);
    out += fmt::format("lower bound  {}{}\n", solver::TotalCostString(*answer.lower_bound),
                       gap.has_value() ? fmt::format(" (gap {:.2f}%)", 100 * *gap) : "");
  }
  out += fmt::format("time         {:.2f} s (loading {:.2f} s)\n", answer.seconds, r.load_s);
  if (const std::optional<double> within = WithinOnePercent(answer, r.improvements)) {
    out += fmt::format("within 1%    of the final cost after {:.2f} s ({} improvements)\n", *within,
                       r.improvements.size());
  }
  if (solved) {
    const std::string peak =
        fmt::format("peak {} at time {}", solver::TotalCostString(r.evaluation.peak_usage),
                    r.evaluation.peak_time);
    if (r.request.usage_limit.has_value()) {
      const double limit = static_cast<double>(*r.request.usage_limit);
      out +=
          fmt::format("memory       {}, limit {} ({:.1f}%)\n", peak, *r.request.usage_limit,
                      limit > 0 ? 100 * static_cast<double>(r.evaluation.peak_usage) / limit : 0.0);
    } else {
      out += fmt::format("memory       {}, no limit\n", peak);
    }
  }
  if (!solved && r.least_peak.has_value() && r.request.usage_limit.has_value()) {
    out += fmt::format(
        "memory       the least possible peak is {} at time {} (every node at its least usage "
        "among its allowed strategies), limit {}\n",
        solver::TotalCostString(r.least_peak->peak_usage), r.least_peak->peak_time,
        *r.request.usage_limit);
  }
  if (!r.options.output.empty()) out += fmt::format("solution     {}\n", r.options.output);
  return out;
}

std::string JsonReport(const Report& r) {
  const Answer& answer = r.answer;
  const bool solved = answer.has_solution();
  Json json = Json::object();
  json["problem"] = r.request.name;
  json["nodes"] = r.request.nodes.size();
  json["edges"] = r.request.edges.size();
  json["solver"] = r.options.solver;
  json["threads"] = r.options.threads;
  json["found_by"] = solved ? Json(answer.solver) : Json(nullptr);
  json["status"] = std::string(solver::SolveStatusName(answer.status));
  json["feasible"] = solved;
  json["cost"] = solved ? TotalJson(answer.cost) : Json(nullptr);
  json["lower_bound"] = OptionalTotalJson(answer.lower_bound);
  const std::optional<double> gap = Gap(answer);
  json["gap"] = gap.has_value() ? Json(*gap) : Json(nullptr);
  json["time_s"] = answer.seconds;
  json["load_s"] = r.load_s;
  const std::optional<double> within = WithinOnePercent(answer, r.improvements);
  json["within_1pct_s"] = within.has_value() ? Json(*within) : Json(nullptr);
  Json improvements = Json::array();
  for (const Improvement& improvement : r.improvements) {
    improvements.push_back(
        {{"seconds", improvement.seconds}, {"cost", TotalJson(improvement.cost)}});
  }
  json["improvements"] = std::move(improvements);
  json["peak_usage"] = solved ? TotalJson(r.evaluation.peak_usage) : Json(nullptr);
  json["peak_time"] = solved ? Json(r.evaluation.peak_time) : Json(nullptr);
  json["usage_limit"] =
      r.request.usage_limit.has_value() ? Json(*r.request.usage_limit) : Json(nullptr);
  if (r.least_peak.has_value()) {
    json["least_possible_peak"] = TotalJson(r.least_peak->peak_usage);
    json["least_possible_peak_time"] = r.least_peak->peak_time;
  }
  if (!r.options.output.empty()) json["solution_file"] = r.options.output;
  return DumpJson(json) + "\n";
}

std::string SolutionJson(const Request& request, const Answer& answer) {
  Json json = Json::object();
  json["problem"] = request.name;
  json["status"] = std::string(solver::SolveStatusName(answer.status));
  json["cost"] = answer.has_solution() ? TotalJson(answer.cost) : Json(nullptr);
  json["solution"] = answer.choice;
  return DumpJson(json) + "\n";
}

}  // namespace

CLI::App* AddSolveCommand(CLI::App& app, SolveCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "solve",
      "Solve an auto-sharding problem (IOPDDL contest format) and verify the solution: cost, "
      "status, lower bound, peak memory");
  command
      ->add_option("PROBLEM", options.problem,
                   "Problem file, JSON or .json.gz, in the IOPDDL contest's format "
                   "(src/solver/iopddl_json.h)")
      ->required();
  command
      ->add_option("--time-limit", options.time_limit_s,
                   "Seconds to load and search (default 60); the heuristic uses all of it unless "
                   "it proves its answer optimal")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--solver", options.solver,
                   "auto (the heuristic, then CBC from its solution when the problem is small "
                   "enough), cbc (exact MILP; on problems of millions of choices its first LP "
                   "can outlast the time limit, and the answer is then no solution) or heuristic")
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Seed of the heuristic's random choices (default 0)")
      ->check(SeedValidator());
  command
      ->add_option(
          "--effort", options.effort,
          "A deterministic bound on the heuristic's work: the same effort, seed and threads give "
          "the same solution on any machine (default: until the time limit)")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--threads", options.threads,
                   "The heuristic's threads, one search each, exchanging their best solution "
                   "every few iterations; the answer depends on the count, never on the "
                   "scheduling (default 1; CBC runs on one)")
      ->check(CLI::Range(1, 1024));
  command
      ->add_option("--relative-gap", options.relative_gap,
                   "Stop once the answer is proven within this fraction of the optimum "
                   "(cost - lower bound <= F x cost), e.g. 0.001 (default 0: only a proof of "
                   "optimality stops the search before its limits)")
      ->check(CLI::Range(0.0, 1.0));
  CLI::Option* json = command->add_flag("--json", options.json, "Print the result as JSON");
  command->add_flag("--cbc-log", options.cbc_log, "Print CBC's own log (on stdout)")
      ->excludes(json);
  command->add_option("-o,--output", options.output,
                      "Write the solution (strategy index per node, JSON) to FILE");
  command->footer(
      "Example:\n"
      "  alpa solve ../shared/iopddl/asplos-2025-iopddl-B.json.gz --time-limit 60\n"
      "Every solution is verified by an independent checker (cost recomputed in 128 bits, no "
      "forbidden entry, memory at every time step within the limit). Exit codes: 0 solved (or "
      "no solution found in time, see status), 2 bad input or a problem proven infeasible (the "
      "least possible peak and its time are printed), 1 internal error.");
  return command;
}

int RunSolve(const SolveCommandOptions& options) {
  Result<solver::SolverKind> kind = solver::ParseSolverKind(options.solver);
  if (!kind.ok()) return ReportError(kind.status().WithContext("--solver"));
  const auto load_begin = std::chrono::steady_clock::now();
  Result<Request> request = solver::LoadIopddlFile(options.problem);
  if (!request.ok()) return ReportError(request.status());
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_begin).count();
  // An unwritable -o fails now, not after the search.
  if (!options.output.empty()) {
    Status writable = WriteTextFile(options.output, "", "-o");
    if (!writable.ok()) return ReportError(writable);
  }

  solver::SolveOptions solve;
  solve.kind = *kind;
  // The limit covers loading too (as the contest's did); a search gets at least a moment.
  solve.time_limit_s = std::max(options.time_limit_s - load_s, kLeastSearchSeconds);
  solve.seed = options.seed;
  solve.effort = options.effort;
  solve.threads = options.threads;
  solve.relative_gap = options.relative_gap;
  solve.milp_log = options.cbc_log;
  std::vector<Improvement> improvements;
  const bool terminal = isatty(STDERR_FILENO);
  solve.on_improvement = [&](double seconds, TotalCost cost) {
    improvements.push_back({load_s + seconds, cost});
    if (terminal) {
      fmt::print(stderr, "{:8.2f} s  best cost {}\n", load_s + seconds,
                 solver::TotalCostString(cost));
    }
  };
  Result<Answer> answer = solver::Solve(*request, solve);
  if (!answer.ok()) return ReportError(answer.status());
  // The checker's figures for the report (Solve has verified the choice already).
  Evaluation evaluation;
  if (answer->has_solution()) {
    Result<Evaluation> checked = solver::EvaluateChoice(*request, answer->choice);
    if (!checked.ok()) return ReportError(Internal("{}", checked.status().message()));
    evaluation = *checked;
  }
  if (!options.output.empty()) {
    Status written = WriteTextFile(options.output, SolutionJson(*request, *answer), "-o");
    if (!written.ok()) return ReportError(written);
  }
  Report report{options, *request, *answer, evaluation, load_s, improvements, std::nullopt};
  if (!answer->has_solution()) {
    Result<Evaluation> least = LeastUsageEvaluation(*request);
    if (!least.ok()) return ReportError(Internal("{}", least.status().message()));
    report.least_peak = *least;
  }
  fmt::print("{}", options.json ? JsonReport(report) : TextReport(report));
  if (answer->status != solver::SolveStatus::kInfeasible) return kExitOk;
  // A problem no choice can solve is one the user must change: exit 2, as for bad input.
  return ReportError(InvalidArgument("{}: infeasible: {}", options.problem,
                                     InfeasibleReason(*request, *report.least_peak)));
}

}  // namespace alpa::tools
