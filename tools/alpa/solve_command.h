// `alpa solve PROBLEM.json[.gz] [--time-limit S] [--solver auto|cbc|heuristic] [--seed N]
// [--effort N] [--threads N] [--relative-gap F] [--json] [-o solution.json] [--cbc-log]`: solves an
// auto-sharding problem in the IOPDDL contest's format (src/solver/iopddl_json.h) with
// src/solver/solve.h, verifies the answer with the independent checker (src/solver/checker.h) and
// prints the cost, the status, the lower bound and gap when a solver proved one, the time and the
// peak memory against the limit.
//
// --json prints one object:
//   {"problem", "nodes", "edges", "solver", "threads", "found_by", "status", "feasible", "cost",
//    "lower_bound", "gap", "time_s", "load_s", "within_1pct_s", "improvements", "peak_usage",
//    "peak_time", "usage_limit"}
// Costs and usages are JSON integers when they fit in a signed 64-bit integer and decimal strings
// otherwise (sums of forbidden entries pass 2^63); "cost", "lower_bound" and "gap" are null when
// there is none, "usage_limit" when the problem has no limit.
//
// -o writes the solution: {"problem": NAME, "status": ..., "cost": ..., "solution": [strategy
// index per node]} ("solution" is empty when there is none).
//
// On a terminal (stderr is a tty) the best cost found so far is printed on stderr as it improves.
// Exit codes: 0 when the problem was solved or proven infeasible (see "status"), 2 for bad input
// (a missing or malformed file, an inconsistent problem, a bad flag), 1 for an internal error.
#ifndef ALPA_TOOLS_ALPA_SOLVE_COMMAND_H_
#define ALPA_TOOLS_ALPA_SOLVE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace alpa::tools {

struct SolveCommandOptions {
  std::string problem;
  double time_limit_s = 60;
  std::string solver = "auto";
  uint64_t seed = 0;
  std::optional<int64_t> effort;
  int threads = 1;
  double relative_gap = 0;
  bool json = false;
  std::string output;
  bool cbc_log = false;
};

// Adds `solve`; returns it.
CLI::App* AddSolveCommand(CLI::App& app, SolveCommandOptions& options);

// Returns the process exit code (command_util.h).
int RunSolve(const SolveCommandOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_SOLVE_COMMAND_H_
