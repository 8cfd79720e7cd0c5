// `alpa solve`: the vendored hand-worked problem (testdata/iopddl/tiny.json, optimum 21) in text
// and JSON, every solver, a .gz input, the solution file, an infeasible problem, and the
// bad-input contract for missing, malformed and inconsistent files and for bad flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

std::string Tiny() { return TestdataPath("iopddl/tiny.json"); }

TEST_F(AlpaCliTest, SolveTinyProblemText) {
  RunResult r = RunAlpa({"solve", Tiny(), "--time-limit", "10"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");  // stderr is not a terminal: no progress lines
  EXPECT_THAT(r.out, HasSubstr("problem      tiny: 3 nodes (6 strategies), 2 edges\n"));
  EXPECT_THAT(r.out, HasSubstr("status       optimal\n"));
  EXPECT_THAT(r.out, HasSubstr("cost         21\n"));
  EXPECT_THAT(r.out, HasSubstr("lower bound  21 (gap 0.00%)\n"));
  EXPECT_THAT(r.out, HasSubstr("memory       peak 7 at time 1, limit 9 (77.8%)\n"));
}

TEST_F(AlpaCliTest, SolveTinyProblemJson) {
  for (const char* solver : {"auto", "cbc", "milp"}) {
    RunResult r = RunAlpa({"solve", Tiny(), "--json", "--solver", solver, "--time-limit", "10"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    nlohmann::json json = ParseJson(r);
    EXPECT_EQ(json["problem"], "tiny");
    EXPECT_EQ(json["solver"], solver);
    EXPECT_EQ(json["cost"], 21);
    EXPECT_EQ(json["feasible"], true);
    EXPECT_EQ(json["status"], "optimal");
    EXPECT_EQ(json["lower_bound"], 21);
    EXPECT_EQ(json["gap"], 0.0);
    EXPECT_TRUE(json["time_s"].is_number());
    EXPECT_EQ(json["peak_usage"], 7);
    EXPECT_EQ(json["peak_time"], 1);
    EXPECT_EQ(json["usage_limit"], 9);
  }
}

TEST_F(AlpaCliTest, SolveWithTheHeuristicAlone) {
  RunResult r = RunAlpa(
      {"solve", Tiny(), "--json", "--solver", "heuristic", "--effort", "100", "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json json = ParseJson(r);
  // Whatever the heuristic finds is verified: a solution is feasible, so it costs at least 21.
  if (json["feasible"] == true) {
    EXPECT_GE(json["cost"].get<int64_t>(), 21);
    // The best cost over time, ending at the answer's, and when it came within 1% of it.
    ASSERT_TRUE(json["improvements"].is_array());
    ASSERT_FALSE(json["improvements"].empty());
    EXPECT_EQ(json["improvements"].back()["cost"], json["cost"]);
    EXPECT_TRUE(json["within_1pct_s"].is_number());
    EXPECT_LE(json["lower_bound"].get<int64_t>(), 21);
  } else {
    EXPECT_TRUE(json["cost"].is_null());
  }
}

TEST_F(AlpaCliTest, SolveOnThreadsGivesTheSameAnswerEachTime) {
  std::vector<std::string> solutions;
  for (const char* name : {"first.json", "second.json"}) {
    const std::string solution = (dir_ / name).string();
    RunResult r = RunAlpa({"solve", Tiny(), "--json", "--solver", "heuristic", "--effort", "100",
                           "--seed", "3", "--threads", "3", "-o", solution});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(ParseJson(r)["threads"], 3);
    solutions.push_back(ReadFile(solution));
  }
  EXPECT_EQ(solutions[0], solutions[1]);
}

TEST_F(AlpaCliTest, SolveGzipInputAndSolutionFile) {
  const std::string gz = (dir_ / "tiny.json.gz").string();
  WriteGzipFile(gz, ReadFile(Tiny()));
  const std::string solution = (dir_ / "solution.json").string();
  RunResult r = RunAlpa({"solve", gz, "--solver", "cbc", "-o", solution, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ParseJson(r)["cost"], 21);
  EXPECT_EQ(ParseJson(r)["solution_file"], solution);
  nlohmann::json written = nlohmann::json::parse(ReadFile(solution));
  EXPECT_EQ(written["solution"], (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(written["cost"], 21);
  EXPECT_EQ(written["status"], "optimal");
}

TEST_F(AlpaCliTest, SolveInfeasibleProblem) {
  // Two nodes live together that need 6 + 6 of a limit of 10: exit 2, with the least peak and
  // where it sits, from every solver.
  const std::string problem = Write("infeasible.json", R"({"problem": {"name": "over",
    "nodes": {"intervals": [[0, 2], [1, 3]], "costs": [[0], [0]], "usages": [[6], [6]]},
    "usage_limit": 10}})");
  for (const char* solver : {"cbc", "heuristic", "auto"}) {
    RunResult r = RunAlpa({"solve", problem, "--json", "--solver", solver});
    ASSERT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("infeasible: no choice fits the memory limit 10: the least "
                                 "possible peak is 12 at time 1"));
    nlohmann::json json = ParseJson(r);
    EXPECT_EQ(json["status"], "infeasible");
    EXPECT_EQ(json["feasible"], false);
    EXPECT_TRUE(json["cost"].is_null());
    EXPECT_EQ(json["least_possible_peak"], 12);
    EXPECT_EQ(json["least_possible_peak_time"], 1);
  }
  RunResult text = RunAlpa({"solve", problem, "--solver", "cbc"});
  ASSERT_EQ(text.exit_code, 2) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("cost         none (no feasible solution found)"));
  EXPECT_THAT(text.out, HasSubstr("the least possible peak is 12 at time 1"));
}

TEST_F(AlpaCliTest, SolveBadInput) {
  ExpectBadInput(RunAlpa({"solve", (dir_ / "missing.json").string()}), "missing.json");
  ExpectBadInput(RunAlpa({"solve", Write("syntax.json",
                                         "{\"problem\": {\n  \"nodes\": {\"costs\": [[1,]]}}}")}),
                 "syntax.json:2:");
  ExpectBadInput(RunAlpa({"solve", Write("type.json", R"({"problem": {"nodes": {
      "intervals": [[0, 1]], "costs": [[1, "2"]], "usages": [[1, 1]]}}})")}),
                 "type.json: problem.nodes.costs[0][1]: must be an integer, found string");
  ExpectBadInput(RunAlpa({"solve", Write("edge.json", R"({"problem": {
      "nodes": {"intervals": [[0, 1]], "costs": [[1]], "usages": [[1]]},
      "edges": {"nodes": [[0, 3]], "costs": [[0]]}}})")}),
                 "edge.json: edge 0: node 3 does not exist");
  ExpectBadInput(RunAlpa({"solve", Write("empty.json", "")}), "empty.json:1:1");
  const std::string bad_gz = Write("bad.json.gz", "not gzip at all");
  ExpectBadInput(RunAlpa({"solve", bad_gz}), "bad.json.gz");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--solver", "gurobi"}),
                 "--solver: unknown solver 'gurobi'");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--time-limit", "-1"}), "--time-limit");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--time-limit", "soon"}), "--time-limit");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--seed", "-1"}), "--seed");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--effort", "-5"}), "--effort");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--threads", "0"}), "--threads");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "--relative-gap", "2"}), "--relative-gap");
  ExpectBadInput(RunAlpa({"solve", Tiny(), "-o", (dir_ / "no" / "dir" / "s.json").string()}), "-o");
  ExpectBadInput(RunAlpa({"solve"}), "PROBLEM");
}

}  // namespace
}  // namespace alpa::tools::testing
