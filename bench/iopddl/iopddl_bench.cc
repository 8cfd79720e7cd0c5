// Solves one IOPDDL problem file with the heuristic solver, through Solve() as `alpa solve
// --solver heuristic` does, verifies the answer with the independent checker and prints one JSON
// line: {"problem", "status", "feasible", "cost", "time_s", "load_s"}.
//
//   iopddl_bench FILE TIME_LIMIT_S
//
// A driver of its own so that the benchmark needs only the solver layer, not the whole `alpa`
// tool.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "solver/checker.h"
#include "solver/iopddl_json.h"
#include "solver/solve.h"

int main(int argc, char** argv) {
  using namespace alpa::solver;
  if (argc != 3) {
    std::fprintf(stderr, "usage: iopddl_bench FILE TIME_LIMIT_S\n");
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
  options.time_limit_s = std::atof(argv[2]);
  options.on_improvement = [](double seconds, TotalCost cost) {
    std::fprintf(stderr, "  %8.2fs %s\n", seconds, TotalCostString(cost).c_str());
  };
  auto answer = Solve(*request, options);
  if (!answer.ok()) {
    std::fprintf(stderr, "%s\n", answer.status().ToString().c_str());
    return 1;
  }
  auto evaluation = EvaluateChoice(*request, answer->choice);
  const bool feasible = answer->has_solution() && evaluation.ok() && evaluation->feasible();
  std::printf(
      "{\"problem\": \"%s\", \"status\": \"%s\", \"feasible\": %s, \"cost\": %s, \"time_s\": %.2f, "
      "\"load_s\": %.2f}\n",
      request->name.c_str(), std::string(SolveStatusName(answer->status)).c_str(),
      feasible ? "true" : "false", feasible ? TotalCostString(evaluation->cost).c_str() : "null",
      answer->seconds, load_s);
  return 0;
}
