// Solves one IOPDDL problem file with the heuristic solver, through Solve() as `alpa solve
// --solver heuristic` does, verifies the answer with the independent checker and prints one JSON
// line: {"problem", "status", "feasible", "cost", "lower_bound", "time_s", "load_s",
// "within_1pct_s"} (the last: when the best cost first came within 1% of the final one, load
// included; -1 without a solution). The time limit covers loading, as the contest's did.
//
//   iopddl_bench FILE TIME_LIMIT_S [THREADS]
//
// A driver of its own so that the benchmark needs only the solver layer, not the whole `alpa`
// tool.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "solver/checker.h"
#include "solver/iopddl_json.h"
#include "solver/search_progress.h"
#include "solver/solve.h"

int main(int argc, char** argv) {
  using namespace alpa::solver;
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: iopddl_bench FILE TIME_LIMIT_S [THREADS]\n");
    return 2;
  }
  const auto load_start = std::chrono::steady_clock::now();
  auto request = LoadIopddlFile(argv[1]);
  if (!request.ok()) {
    std::fprintf(stderr, "%s\n", request.status().ToString().c_str());
    return 2;
  }
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  SolveOptions options;
  options.kind = SolverKind::kHeuristic;
  // The contest's limit covers loading too.
  options.time_limit_s = std::max(0.01, std::atof(argv[2]) - load_s);
  options.threads = argc == 4 ? std::atoi(argv[3]) : 1;
  std::vector<Improvement> improvements;
  options.on_improvement = [&](double seconds, TotalCost cost) {
    improvements.push_back({load_s + seconds, cost});
    std::fprintf(stderr, "  %8.2fs %s\n", load_s + seconds, TotalCostString(cost).c_str());
  };
  auto answer = Solve(*request, options);
  if (!answer.ok()) {
    std::fprintf(stderr, "%s\n", answer.status().ToString().c_str());
    return 1;
  }
  auto evaluation = EvaluateChoice(*request, answer->choice);
  const bool feasible = answer->has_solution() && evaluation.ok() && evaluation->feasible();
  // The first time the best cost came within 1% of the final one (load included).
  const double within_1pct_s =
      feasible ? FirstWithin(improvements, evaluation->cost, 0.01).value_or(-1) : -1;
  const std::string bound =
      answer->lower_bound.has_value() ? TotalCostString(*answer->lower_bound) : "null";
  std::printf(
      "{\"problem\": \"%s\", \"status\": \"%s\", \"feasible\": %s, \"cost\": %s, "
      "\"lower_bound\": %s, \"time_s\": %.2f, \"load_s\": %.2f, \"within_1pct_s\": %.2f}\n",
      request->name.c_str(), std::string(SolveStatusName(answer->status)).c_str(),
      feasible ? "true" : "false", feasible ? TotalCostString(evaluation->cost).c_str() : "null",
      bound.c_str(), answer->seconds, load_s, within_1pct_s);
  return 0;
}
