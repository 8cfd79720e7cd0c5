// Solve(): solver names, validation before solving, and the guarantee that no solver's forbidden
// or over-memory choice is ever returned.
#include "solver/solve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "solver/checker.h"
#include "tests/solver/test_problems.h"

namespace alpa::solver {
namespace {

using ::testing::HasSubstr;

TEST(ParseSolverKind, NamesAndAliases) {
  EXPECT_EQ(*ParseSolverKind("auto"), SolverKind::kAuto);
  EXPECT_EQ(*ParseSolverKind("cbc"), SolverKind::kMilp);
  EXPECT_EQ(*ParseSolverKind("milp"), SolverKind::kMilp);
  EXPECT_EQ(*ParseSolverKind("heuristic"), SolverKind::kHeuristic);
  Result<SolverKind> bad = ParseSolverKind("gurobi");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown solver 'gurobi'; expected auto, cbc (also called milp) or heuristic");
  for (SolverKind kind : {SolverKind::kAuto, SolverKind::kMilp, SolverKind::kHeuristic}) {
    EXPECT_EQ(*ParseSolverKind(SolverKindName(kind)), kind);
  }
}

TEST(Solve, RejectsInvalidInput) {
  Request request = testing::RandomRequest(1, 4, 3, 0.0);
  SolveOptions options;
  options.time_limit_s = 5;
  request.edges[0].costs.pop_back();
  Result<Answer> answer = Solve(request, options);
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("edge 0"));

  request = testing::RandomRequest(1, 4, 3, 0.0);
  options.time_limit_s = 0;
  EXPECT_THAT(Solve(request, options).status().message(), HasSubstr("time limit"));
  options.time_limit_s = 5;
  options.start = {0, 0, 0, 7};
  EXPECT_THAT(Solve(request, options).status().message(),
              HasSubstr("the start: node 3: strategy 7 does not exist"));
  options.start.clear();
  options.threads = 0;
  EXPECT_THAT(Solve(request, options).status().message(),
              HasSubstr("0 threads: must be 1 to 1024"));
}

TEST(Solve, NeverReturnsAForbiddenOrOverMemoryChoice) {
  for (SolverKind kind : {SolverKind::kAuto, SolverKind::kMilp, SolverKind::kHeuristic}) {
    for (uint64_t seed = 100; seed < 120; ++seed) {
      const Request request = testing::RandomRequest(seed, 8, 4, 0.2);
      SolveOptions options;
      options.kind = kind;
      options.time_limit_s = 5;
      options.effort = 1000;
      Result<Answer> answer = Solve(request, options);
      ASSERT_TRUE(answer.ok()) << answer.status().message();
      if (!answer->has_solution()) {
        EXPECT_TRUE(answer->choice.empty());
        continue;
      }
      Result<Evaluation> check = EvaluateChoice(request, answer->choice);
      ASSERT_TRUE(check.ok());
      EXPECT_TRUE(check->feasible()) << SolverKindName(kind) << " seed " << seed;
      EXPECT_EQ(check->cost, answer->cost);
    }
  }
}

TEST(Solve, EmptyProblemIsSolved) {
  for (SolverKind kind : {SolverKind::kAuto, SolverKind::kMilp, SolverKind::kHeuristic}) {
    SolveOptions options;
    options.kind = kind;
    options.time_limit_s = 1;
    Result<Answer> answer = Solve(Request{}, options);
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_TRUE(answer->has_solution()) << SolverKindName(kind);
    EXPECT_EQ(answer->cost, 0);
  }
}

TEST(Solve, AutoFindsTheOptimumOfSmallProblems) {
  for (uint64_t seed = 200; seed < 210; ++seed) {
    const Request request = testing::RandomRequest(seed, 8, 3, 0.05);
    const testing::BruteForce expected = testing::SolveByEnumeration(request);
    SolveOptions options;
    options.time_limit_s = 20;
    options.effort = 1000;
    Result<Answer> answer = Solve(request, options);
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    if (!expected.optimum.has_value()) {
      EXPECT_EQ(answer->status, SolveStatus::kInfeasible) << "seed " << seed;
      continue;
    }
    EXPECT_EQ(answer->status, SolveStatus::kOptimal) << "seed " << seed;
    EXPECT_EQ(answer->cost, *expected.optimum) << "seed " << seed;
    EXPECT_EQ(answer->lower_bound, *expected.optimum);
  }
}

}  // namespace
}  // namespace alpa::solver
