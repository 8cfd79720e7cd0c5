// The heuristic solver against brute force on small random problems, and its contract: never a
// forbidden or over-limit choice, proven infeasibility, determinism, the effort bound, the start.
#include "solver/heuristic_solver.h"

#include <gtest/gtest.h>

#include "solver/checker.h"
#include "tests/solver/test_problems.h"

namespace alpa::solver {
namespace {

SolveOptions EffortOptions(int64_t effort) {
  SolveOptions options;
  options.kind = SolverKind::kHeuristic;
  options.time_limit_s = 60;  // a safety net; the effort bounds the work
  options.effort = effort;
  return options;
}

// A chain a - b - c where b must be sharded like a and like c (forbidden off the diagonal): the
// reductions contract it into one node.
Request PinnedChain() {
  Request request;
  for (int v = 0; v < 3; ++v) {
    request.nodes.push_back({{0, 2}, {5, 1, 7}, {4, 6, 2}});
  }
  const int64_t f = kForbiddenCost;
  request.edges.push_back({0, 1, {0, f, f, f, 0, f, f, f, 0}});
  request.edges.push_back({1, 2, {0, f, f, f, 0, f, f, f, 0}});
  return request;
}

TEST(SolveHeuristic, FindsTheBruteForceOptimum) {
  // With and without memory limits and forbidden entries. Not exact on every problem: the
  // Lagrangian prices cannot single out an optimum inside a duality gap, and repair plus descent
  // may then stop next to it.
  int exact = 0, solved = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const Request request = testing::RandomRequest(seed, 7, 3, seed % 3 == 0 ? 0.2 : 0.05);
    const testing::BruteForce expected = testing::SolveByEnumeration(request);
    Result<Answer> answer = SolveHeuristic(request, EffortOptions(300));
    ASSERT_TRUE(answer.ok());
    if (!expected.optimum.has_value()) {
      EXPECT_FALSE(answer->has_solution()) << "seed " << seed;
      continue;
    }
    ASSERT_TRUE(answer->has_solution()) << "seed " << seed;
    ++solved;
    exact += answer->cost == *expected.optimum;
    EXPECT_LE(answer->cost, *expected.optimum * 11 / 10) << "seed " << seed;
    ASSERT_TRUE(answer->lower_bound.has_value());
    EXPECT_LE(*answer->lower_bound, *expected.optimum);
    EXPECT_EQ(answer->solver, "heuristic");
  }
  EXPECT_GE(exact, solved * 9 / 10) << exact << " of " << solved << " exact";
}

TEST(SolveHeuristic, NeverReturnsAForbiddenOrOverLimitChoice) {
  int solved = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Request request = testing::RandomRequest(seed, 40, 6, 0.03);
    Result<Answer> answer = SolveHeuristic(request, EffortOptions(50));
    ASSERT_TRUE(answer.ok());
    if (!answer->has_solution()) {
      EXPECT_TRUE(answer->choice.empty());
      continue;
    }
    ++solved;
    Result<Evaluation> check = EvaluateChoice(request, answer->choice);
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(check->feasible()) << "seed " << seed;
    EXPECT_EQ(check->cost, answer->cost);
  }
  EXPECT_GE(solved, 10);  // the test means something
}

TEST(SolveHeuristic, ProvesInfeasibility) {
  // Least possible usage over the limit at time 1: nodes 0 and 1 overlap there.
  Request memory;
  memory.nodes.push_back({{0, 2}, {1, 2}, {5, 3}});
  memory.nodes.push_back({{1, 3}, {1, 2}, {4, 6}});
  memory.usage_limit = 6;
  Result<Answer> answer = SolveHeuristic(memory, EffortOptions(10));
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kInfeasible);
  EXPECT_TRUE(answer->choice.empty());
  memory.usage_limit = 7;
  answer = SolveHeuristic(memory, EffortOptions(10));
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->has_solution());
  EXPECT_EQ(answer->choice, (std::vector<int64_t>{1, 0}));

  // Every combination of the edge is forbidden once node 1's forbidden strategy is gone.
  const int64_t f = kForbiddenCost;
  Request edges;
  edges.nodes.push_back({{}, {1, 2}, {0, 0}});
  edges.nodes.push_back({{}, {f, 3}, {0, 0}});
  edges.edges.push_back({0, 1, {0, f, 0, f}});
  answer = SolveHeuristic(edges, EffortOptions(10));
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kInfeasible);
}

TEST(SolveHeuristic, ContractsPinnedNodes) {
  // Strategy 1 everywhere costs 3, the cheap lower bound of the contracted node: optimal. With
  // the limit, 6 + 6 + 6 > 17 rules it out, and strategy 0 (cost 15, usage 12) beats strategy 2
  // (cost 21, usage 6); the bound (3) no longer proves it.
  Request request = PinnedChain();
  Result<Answer> answer = SolveHeuristic(request, EffortOptions(10));
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kOptimal);
  EXPECT_EQ(answer->choice, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(answer->cost, 3);
  EXPECT_EQ(answer->lower_bound, 3);
  request.usage_limit = 17;
  answer = SolveHeuristic(request, EffortOptions(10));
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, SolveStatus::kFeasible);
  EXPECT_EQ(answer->choice, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(answer->cost, 15);
}

TEST(SolveHeuristic, IsDeterministic) {
  // Also with many restarts (patience 3), whose randomness the seed draws.
  const Request request = testing::RandomRequest(7, 300, 6, 0.1);
  SolveOptions restarting = EffortOptions(60);
  restarting.patience = 3;
  restarting.seed = 5;
  for (const SolveOptions& options : {EffortOptions(40), restarting}) {
    Result<Answer> first = SolveHeuristic(request, options);
    Result<Answer> second = SolveHeuristic(request, options);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(first->status, second->status);
    EXPECT_EQ(first->choice, second->choice);
    EXPECT_EQ(first->cost, second->cost);
    EXPECT_EQ(first->lower_bound, second->lower_bound);
  }
}

TEST(SolveHeuristic, MoreEffortIsNeverWorse) {
  // The iterations of a smaller effort are a prefix of a larger one's, and the best only improves.
  for (uint64_t seed = 30; seed < 36; ++seed) {
    const Request request = testing::RandomRequest(seed, 200, 5, 0.1);
    Result<Answer> small = SolveHeuristic(request, EffortOptions(1));
    Result<Answer> large = SolveHeuristic(request, EffortOptions(30));
    ASSERT_TRUE(small.ok());
    ASSERT_TRUE(large.ok());
    if (small->has_solution()) {
      ASSERT_TRUE(large->has_solution());
      EXPECT_LE(large->cost, small->cost) << "seed " << seed;
    }
  }
}

TEST(SolveHeuristic, StartsFromTheGivenSolution) {
  // With no iteration at all (effort 0) the answer is the start, improved by descent only.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Request request = testing::RandomRequest(seed, 7, 3, 0.05);
    const testing::BruteForce expected = testing::SolveByEnumeration(request);
    if (!expected.optimum.has_value()) continue;
    SolveOptions options = EffortOptions(0);
    options.start = expected.choice;
    Result<Answer> answer = SolveHeuristic(request, options);
    ASSERT_TRUE(answer.ok());
    ASSERT_TRUE(answer->has_solution()) << "seed " << seed;
    EXPECT_EQ(answer->cost, *expected.optimum) << "seed " << seed;
  }
}

TEST(SolveHeuristic, ReportsImprovements) {
  Request request = testing::RandomRequest(3, 100, 5, 0.0);
  request.usage_limit.reset();
  SolveOptions options = EffortOptions(20);
  std::vector<TotalCost> costs;
  options.on_improvement = [&](double, TotalCost cost) { costs.push_back(cost); };
  Result<Answer> answer = SolveHeuristic(request, options);
  ASSERT_TRUE(answer.ok());
  ASSERT_TRUE(answer->has_solution());
  ASSERT_FALSE(costs.empty());
  for (size_t i = 1; i < costs.size(); ++i) EXPECT_LT(costs[i], costs[i - 1]);
  EXPECT_EQ(costs.back(), answer->cost);
}

TEST(SolveHeuristic, TheLagrangianBoundProvesMostSmallOptima) {
  // The bound (TRW-S's dual at the memory prices) never passes the optimum, and on half the small
  // problems or more it meets it (40 of 71 when written; the others are Lagrangian duality gaps
  // of a binding limit): the answer is then kOptimal by proof. The cheap bound (every node and
  // edge at its least cost) proves far fewer.
  int proven = 0, solved = 0, cheap = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const Request request = testing::RandomRequest(seed, 7, 3, 0.05);
    const testing::BruteForce expected = testing::SolveByEnumeration(request);
    if (!expected.optimum.has_value()) continue;
    Result<Answer> answer = SolveHeuristic(request, EffortOptions(300));
    ASSERT_TRUE(answer.ok());
    ASSERT_TRUE(answer->lower_bound.has_value());
    ASSERT_LE(*answer->lower_bound, *expected.optimum) << "seed " << seed;
    ++solved;
    if (answer->status == SolveStatus::kOptimal) {
      EXPECT_EQ(answer->cost, *expected.optimum) << "seed " << seed;
      EXPECT_EQ(*answer->lower_bound, answer->cost) << "seed " << seed;
      ++proven;
    }
    SolveOptions no_iteration = EffortOptions(0);
    Result<Answer> cheap_only = SolveHeuristic(request, no_iteration);
    ASSERT_TRUE(cheap_only.ok());
    cheap += cheap_only->lower_bound == *expected.optimum;
  }
  EXPECT_GE(proven, solved / 2) << proven << " of " << solved << " proven";
  EXPECT_LT(cheap, proven) << "the cheap bound alone proves " << cheap;
}

TEST(SolveHeuristic, StopsOnceTheAnswerIsWithinTheRelativeGap) {
  // Costs are non-negative, so any solution is within 100% of the cheap bound: with that gap the
  // search stops at its first solution, where the full search goes on improving.
  int stopped_sooner = 0;
  for (uint64_t seed = 40; seed < 50; ++seed) {
    const Request request = testing::RandomRequest(seed, 150, 5, 0.05);
    int full_improvements = 0, loose_improvements = 0;
    SolveOptions full = EffortOptions(100);
    full.on_improvement = [&](double, TotalCost) { ++full_improvements; };
    SolveOptions loose = EffortOptions(100);
    loose.relative_gap = 1.0;
    loose.on_improvement = [&](double, TotalCost) { ++loose_improvements; };
    Result<Answer> full_answer = SolveHeuristic(request, full);
    Result<Answer> loose_answer = SolveHeuristic(request, loose);
    ASSERT_TRUE(full_answer.ok());
    ASSERT_TRUE(loose_answer.ok());
    if (!full_answer->has_solution()) continue;
    ASSERT_TRUE(loose_answer->has_solution()) << "seed " << seed;
    EXPECT_TRUE(WithinGap(loose_answer->cost, loose_answer->lower_bound, 1.0)) << "seed " << seed;
    EXPECT_LE(full_answer->cost, loose_answer->cost) << "seed " << seed;
    stopped_sooner += full_improvements > loose_improvements;
  }
  EXPECT_GT(stopped_sooner, 0);
}

TEST(SolveHeuristic, AStallRestartsTheSearchUnlessAskedToStop) {
  // Up to the first stall both runs are the same iterations; after it the restarting run goes on
  // to its effort, so it is never worse, and on some problem better.
  int better = 0;
  for (uint64_t seed = 40; seed < 50; ++seed) {
    const Request request = testing::RandomRequest(seed, 150, 5, 0.05);
    SolveOptions stopping = EffortOptions(150);
    stopping.patience = 5;
    stopping.stop_when_stalled = true;
    SolveOptions restarting = stopping;
    restarting.stop_when_stalled = false;
    Result<Answer> stopped = SolveHeuristic(request, stopping);
    Result<Answer> restarted = SolveHeuristic(request, restarting);
    ASSERT_TRUE(stopped.ok());
    ASSERT_TRUE(restarted.ok());
    if (!stopped->has_solution()) continue;
    ASSERT_TRUE(restarted->has_solution()) << "seed " << seed;
    EXPECT_LE(restarted->cost, stopped->cost) << "seed " << seed;
    better += restarted->cost < stopped->cost;
  }
  EXPECT_GT(better, 0);
}

}  // namespace
}  // namespace alpa::solver
