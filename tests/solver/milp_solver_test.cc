// The MILP against brute-force enumeration on random small problems (forbidden entries, parallel
// edges, memory limits), proven infeasibility, the warm start, and the model's memory rows.
#include "solver/milp_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "solver/checker.h"
#include "solver/milp_model.h"
#include "tests/solver/test_problems.h"

namespace alpa::solver {
namespace {

using ::testing::HasSubstr;

SolveOptions MilpOptions() {
  SolveOptions options;
  options.kind = SolverKind::kMilp;
  options.time_limit_s = 60;
  return options;
}

TEST(SolveMilp, MatchesBruteForceOnRandomProblems) {
  int feasible = 0, infeasible = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Request request = testing::RandomRequest(seed, 8, 4, seed % 3 == 0 ? 0.15 : 0.03);
    const testing::BruteForce expected = testing::SolveByEnumeration(request);
    Result<Answer> answer = SolveMilp(request, MilpOptions());
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_EQ(answer->solver, "cbc");
    if (!expected.optimum.has_value()) {
      ++infeasible;
      EXPECT_EQ(answer->status, SolveStatus::kInfeasible) << "seed " << seed;
      EXPECT_TRUE(answer->choice.empty());
      continue;
    }
    ++feasible;
    ASSERT_EQ(answer->status, SolveStatus::kOptimal) << "seed " << seed;
    EXPECT_EQ(answer->cost, *expected.optimum) << "seed " << seed;
    EXPECT_EQ(answer->lower_bound, *expected.optimum) << "seed " << seed;
    Result<Evaluation> check = EvaluateChoice(request, answer->choice);
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(check->feasible()) << "seed " << seed;
    EXPECT_EQ(check->cost, answer->cost);
  }
  // The generator covers both outcomes.
  EXPECT_GT(feasible, 20);
  EXPECT_GT(infeasible, 3);
}

TEST(SolveMilp, ProvesInfeasibility) {
  // Over memory: two nodes live together, each needs at least 6 of a limit of 10.
  Request memory;
  memory.nodes = {Node{{0, 2}, {0, 0}, {6, 7}}, Node{{1, 3}, {0, 0}, {8, 6}}};
  memory.usage_limit = 10;
  // Every pair forbidden by the edge.
  Request pairs;
  pairs.nodes = {Node{{0, 1}, {0, 0}, {0, 0}}, Node{{0, 1}, {0, 0}, {0, 0}}};
  pairs.edges = {Edge{0, 1, {kForbiddenCost, kForbiddenCost, kForbiddenCost, kForbiddenCost}}};
  // Every strategy of a node forbidden.
  Request node;
  node.nodes = {Node{{0, 1}, {kForbiddenCost, kForbiddenCost}, {0, 0}}};
  for (const Request* request : {&memory, &pairs, &node}) {
    Result<Answer> answer = SolveMilp(*request, MilpOptions());
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->status, SolveStatus::kInfeasible);
    EXPECT_TRUE(answer->choice.empty());
  }
}

// A feasible random problem for the warm start tests.
Request Chain() { return testing::RandomRequest(7, 8, 4, 0.0); }

TEST(SolveMilp, WarmStartIsKeptWhenTheSearchHasNoTime) {
  const Request request = Chain();
  const testing::BruteForce best = testing::SolveByEnumeration(request);
  ASSERT_TRUE(best.optimum.has_value());
  // Some feasible choice other than the optimum: the brute force's first feasible one will do.
  std::vector<int64_t> start;
  for (int64_t s = 0; start.empty(); ++s) {
    std::vector<int64_t> choice(request.nodes.size(), 0);
    for (size_t v = 0; v < choice.size(); ++v) {
      choice[v] = (s >> v) % request.nodes[v].num_strategies();
    }
    if (EvaluateChoice(request, choice)->feasible()) start = choice;
  }
  SolveOptions options = MilpOptions();
  options.start = start;
  options.time_limit_s = 1e-9;  // gone before CBC starts
  Result<Answer> answer = SolveMilp(request, options);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->choice, start);
  EXPECT_EQ(answer->cost, EvaluateChoice(request, start)->cost);
  EXPECT_NE(answer->status, SolveStatus::kNoSolution);

  // With time, CBC improves on it (or proves it optimal) and reports the improvement.
  options.time_limit_s = 60;
  int improvements = 0;
  options.on_improvement = [&](double, TotalCost cost) {
    ++improvements;
    EXPECT_EQ(cost, *best.optimum);
  };
  answer = SolveMilp(request, options);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kOptimal);
  EXPECT_EQ(answer->cost, *best.optimum);
  const TotalCost start_cost = EvaluateChoice(request, start)->cost;
  EXPECT_EQ(improvements, *best.optimum < start_cost ? 1 : 0);
}

TEST(SolveMilp, OptimalStartIsProvenOptimal) {
  const Request request = Chain();
  const testing::BruteForce best = testing::SolveByEnumeration(request);
  SolveOptions options = MilpOptions();
  options.start = best.choice;
  bool called = false;
  options.on_improvement = [&](double, TotalCost) { called = true; };
  Result<Answer> answer = SolveMilp(request, options);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kOptimal);
  EXPECT_EQ(answer->cost, *best.optimum);
  EXPECT_FALSE(called);  // nothing better than the start
}

TEST(SolveMilp, MalformedStartIsAnError) {
  SolveOptions options = MilpOptions();
  options.start = {0};
  Result<Answer> answer = SolveMilp(Chain(), options);
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("the start: the choice has 1 entries"));
}

TEST(SolveMilp, CostsAreExactBeyondDoublePrecision) {
  // Costs near 1e17 are not exact in a double (spacing 16): the answer's cost is the checker's.
  Request request;
  request.nodes = {Node{{0, 1}, {100000000000000003, 100000000000000001}, {0, 0}},
                   Node{{0, 1}, {7, 100000000000000011}, {0, 0}}};
  request.edges = {Edge{0, 1, {1, 2, 3, 4}}};
  Result<Answer> answer = SolveMilp(request, MilpOptions());
  ASSERT_TRUE(answer.ok());
  ASSERT_FALSE(answer->choice.empty());
  EXPECT_EQ(answer->cost, EvaluateChoice(request, answer->choice)->cost);
  EXPECT_NE(answer->status, SolveStatus::kNoSolution);
  ASSERT_TRUE(answer->lower_bound.has_value());
  EXPECT_LE(*answer->lower_bound, answer->cost);
}

TEST(MilpModel, MemoryRowsOnlyAtMaximalLiveSets) {
  // Node 0 lives over [0, 10), node 1 over [2, 4), node 2 over [5, 7). The maximal live sets are
  // {0, 1} at t = 3 and {0, 2} at t = 6; {0} at t = 9 is contained in both.
  Request request;
  request.nodes = {Node{{0, 10}, {0, 0}, {1, 5}}, Node{{2, 4}, {0, 0}, {1, 5}},
                   Node{{5, 7}, {0, 0}, {1, 5}}};
  request.usage_limit = 9;
  MilpModel model = BuildMilpModel(request);
  EXPECT_FALSE(model.infeasible);
  EXPECT_EQ(model.memory_rows, 2);
  // The chain, with the extra usage 5 - 1 = 4 of strategy 1 and U <= 9 - 1 - 1 = 7:
  //   U1 - 4 s[0,1] - 4 s[1,1] = 0;  U2 - U1 + 4 s[1,1] - 4 s[2,1] = 0  (node 1 left, 2 came).
  std::vector<int64_t> usage_rows;
  for (int64_t c = 0; c < model.num_columns(); ++c) {
    if (model.columns[c].kind != MilpModel::Kind::kUsage) continue;
    EXPECT_EQ(model.upper[c], 7.0);
    usage_rows.push_back(model.columns[c].i);
  }
  ASSERT_EQ(usage_rows.size(), 2u);
  EXPECT_EQ(model.row_start[usage_rows[0] + 1] - model.row_start[usage_rows[0]], 3);
  EXPECT_EQ(model.row_start[usage_rows[1] + 1] - model.row_start[usage_rows[1]], 4);
  // A limit the largest usages fit needs no row.
  request.usage_limit = 10;
  EXPECT_EQ(BuildMilpModel(request).memory_rows, 0);
  // A limit below the smallest usages is infeasible, at the first maximal set.
  request.usage_limit = 1;
  model = BuildMilpModel(request);
  EXPECT_TRUE(model.infeasible);
  EXPECT_THAT(model.why, HasSubstr("at time 3"));
}

TEST(MilpModel, PresolveFixesAndFolds) {
  // Node 1's strategy 1 is forbidden: node 1 is fixed, its edge folds into node 0's costs, and
  // node 0's strategy 0 (forbidden with node 1's strategy 0) goes by arc consistency: all fixed.
  Request request;
  request.nodes = {Node{{0, 1}, {1, 2}, {0, 0}}, Node{{0, 1}, {3, kForbiddenCost}, {0, 0}}};
  request.edges = {Edge{0, 1, {kForbiddenCost, 0, 10, 0}}};
  const MilpModel model = BuildMilpModel(request);
  EXPECT_FALSE(model.infeasible);
  EXPECT_EQ(model.num_columns(), 0);
  EXPECT_EQ(model.fixed, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(model.offset, 2 + 3 + 10);
  EXPECT_EQ(CountMilpColumns(request), 0);
}

}  // namespace
}  // namespace alpa::solver
