#include "sharding/cost_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "solver/checker.h"

namespace alpa::sharding {
namespace {

using ::testing::ElementsAre;

CostGraphNode Node(std::vector<double> seconds, std::vector<int64_t> memory, solver::Interval live,
                   int64_t follows = -1) {
  return CostGraphNode{std::move(seconds), std::move(memory), live, follows};
}

TEST(ToSolverCostTest, PicosecondsAndForbidden) {
  EXPECT_EQ(ToSolverCost(1e-9), 1000);
  EXPECT_EQ(ToSolverCost(2.5), 2'500'000'000'000);
  EXPECT_EQ(ToSolverCost(0.0), 0);
  EXPECT_EQ(ToSolverCost(std::numeric_limits<double>::infinity()), solver::kForbiddenCost);
  EXPECT_EQ(ToSolverCost(std::numeric_limits<double>::quiet_NaN()), solver::kForbiddenCost);
  EXPECT_EQ(ToSolverCost(1e9), solver::kForbiddenCost);  // 1e21 ps does not fit
}

TEST(ReduceCostGraphTest, WithoutFollowersNodesAndEdgesCarryOver) {
  CostGraph graph;
  graph.nodes.push_back(Node({1e-6, 2e-6}, {10, 5}, {0, 2}));
  graph.nodes.push_back(Node({3e-6}, {7}, {1, 3}));
  graph.nodes.push_back(Node({0, 0}, {1, 1}, {2, 4}));
  graph.edges.push_back({0, 1, {4e-6, 5e-6}});
  graph.edges.push_back({1, 2, {0, 0}});  // costs nothing: dropped
  ReducedProblem problem = ReduceCostGraph(graph, "g", 100);

  ASSERT_EQ(problem.request.nodes.size(), 3u);
  EXPECT_EQ(problem.request.name, "g");
  EXPECT_EQ(problem.request.usage_limit, 100);
  EXPECT_THAT(problem.request.nodes[0].costs, ElementsAre(1'000'000, 2'000'000));
  EXPECT_THAT(problem.request.nodes[0].usages, ElementsAre(10, 5));
  EXPECT_EQ(problem.request.nodes[1].interval, (solver::Interval{1, 3}));
  ASSERT_EQ(problem.request.edges.size(), 1u);
  EXPECT_EQ(problem.request.edges[0].from, 0);
  EXPECT_EQ(problem.request.edges[0].to, 1);
  EXPECT_THAT(problem.request.edges[0].costs, ElementsAre(4'000'000, 5'000'000));
  EXPECT_THAT(problem.solver_node_of, ElementsAre(0, 1, 2));
}

TEST(ReduceCostGraphTest, FollowerChainMergesIntoItsRootLeader) {
  CostGraph graph;
  graph.nodes.push_back(Node({1e-12, 2e-12}, {4, 2}, {0, 3}));         // 0: leader
  graph.nodes.push_back(Node({10e-12, 20e-12}, {4, 2}, {1, 2}, 0));    // 1 follows 0
  graph.nodes.push_back(Node({100e-12, 200e-12}, {1, 1}, {5, 6}, 1));  // 2 follows 1
  graph.nodes.push_back(Node({0, 0, 0}, {0, 0, 0}, {0, 1}));           // 3: an unrelated operand
  // Inside the group only the diagonal counts: 0 -> 1 adds 1000 and 4000 ps.
  graph.edges.push_back({0, 1, {1000e-12, 2000e-12, 3000e-12, 4000e-12}});
  // 3 -> 2 becomes 3 -> 0 with the same matrix.
  graph.edges.push_back({3, 2, {1e-12, 2e-12, 3e-12, 4e-12, 5e-12, 6e-12}});
  ReducedProblem problem = ReduceCostGraph(graph, "g", std::nullopt);

  // The two groups, then the group's memory over its members' second and third intervals.
  ASSERT_EQ(problem.request.nodes.size(), 4u);
  EXPECT_THAT(problem.solver_node_of, ElementsAre(0, 0, 0, 1));
  const solver::Node& group = problem.request.nodes[0];
  EXPECT_THAT(group.costs, ElementsAre(1 + 10 + 100 + 1000, 2 + 20 + 200 + 4000));
  // Each member's memory over its own interval: the leader's on the group's node, the others'
  // on nodes tied to it (the operand holds nothing, so its node has no interval).
  EXPECT_EQ(group.interval, (solver::Interval{0, 3}));
  EXPECT_THAT(group.usages, ElementsAre(4, 2));
  EXPECT_TRUE(problem.request.nodes[1].interval.empty());
  EXPECT_EQ(problem.request.nodes[2].interval, (solver::Interval{1, 2}));
  EXPECT_THAT(problem.request.nodes[2].usages, ElementsAre(4, 2));
  EXPECT_THAT(problem.request.nodes[2].costs, ElementsAre(0, 0));
  EXPECT_EQ(problem.request.nodes[3].interval, (solver::Interval{5, 6}));
  EXPECT_THAT(problem.request.nodes[3].usages, ElementsAre(1, 1));
  ASSERT_EQ(problem.request.edges.size(), 3u);
  EXPECT_EQ(problem.request.edges[0].from, 1);
  EXPECT_EQ(problem.request.edges[0].to, 0);
  EXPECT_THAT(problem.request.edges[0].costs, ElementsAre(1, 2, 3, 4, 5, 6));
  for (size_t e = 1; e < 3; ++e) {
    EXPECT_EQ(problem.request.edges[e].from, 0);
    EXPECT_EQ(problem.request.edges[e].to, static_cast<int64_t>(e + 1));
    EXPECT_THAT(problem.request.edges[e].costs,
                ElementsAre(0, solver::kForbiddenCost, solver::kForbiddenCost, 0));
  }
  EXPECT_THAT(ExpandChoice(problem, {1, 2, 1, 1}), ElementsAre(1, 1, 1, 2));
}

// The request's memory is the members' own, however the group's intervals overlap: the peak of
// any choice is the largest sum of the members live at one time, not a group's peak held over the
// span of all its members.
TEST(ReduceCostGraphTest, GroupMemoryIsExact) {
  CostGraph graph;
  graph.nodes.push_back(Node({0, 0}, {100, 50}, {0, 10}));   // 0: long-lived leader
  graph.nodes.push_back(Node({0, 0}, {30, 15}, {2, 3}, 0));  // 1: a short follower
  graph.nodes.push_back(Node({0, 0}, {40, 20}, {5, 6}));     // 2: unrelated, later
  ReducedProblem problem = ReduceCostGraph(graph, "g", std::nullopt);
  Result<solver::Evaluation> evaluation =
      solver::EvaluateChoice(problem.request, std::vector<int64_t>{0, 0, 0});
  ASSERT_TRUE(evaluation.ok()) << evaluation.status().message();
  EXPECT_EQ(evaluation->peak_usage, 140);  // 100 + 40 at t = 5; (100 + 30) at t = 2 is less
  evaluation = solver::EvaluateChoice(problem.request, std::vector<int64_t>{1, 0, 1});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->peak_usage, 90);  // 50 + 40
}

TEST(ReduceCostGraphTest, ParallelEdgesOfEitherOrientationAreSummed) {
  CostGraph graph;
  graph.nodes.push_back(Node({0, 0}, {0, 0}, {0, 1}));
  graph.nodes.push_back(Node({0, 0, 0}, {0, 0, 0}, {0, 1}));
  graph.edges.push_back({0, 1, {1e-12, 2e-12, 3e-12, 4e-12, 5e-12, 6e-12}});
  // The reverse orientation: 3 x 2, transposed onto the first edge.
  graph.edges.push_back({1, 0, {10e-12, 20e-12, 30e-12, 40e-12, 50e-12, 60e-12}});
  ReducedProblem problem = ReduceCostGraph(graph, "g", std::nullopt);

  ASSERT_EQ(problem.request.edges.size(), 1u);
  EXPECT_THAT(problem.request.edges[0].costs,
              ElementsAre(1 + 10, 2 + 30, 3 + 50, 4 + 20, 5 + 40, 6 + 60));
}

TEST(ReduceCostGraphTest, ForbiddenChoicesBecomeForbiddenCosts) {
  CostGraph graph;
  const double inf = std::numeric_limits<double>::infinity();
  graph.nodes.push_back(Node({inf, 0}, {0, 0}, {0, 1}));
  ReducedProblem problem = ReduceCostGraph(graph, "g", std::nullopt);
  EXPECT_THAT(problem.request.nodes[0].costs, ElementsAre(solver::kForbiddenCost, 0));
}

TEST(ReduceCostGraphDeathTest, FollowerWithAnotherStrategyCountAborts) {
  CostGraph graph;
  graph.nodes.push_back(Node({0, 0}, {0, 0}, {0, 1}));
  graph.nodes.push_back(Node({0}, {0}, {0, 1}, 0));
  EXPECT_DEATH(ReduceCostGraph(graph, "g", std::nullopt), "follows a node with 2");
}

}  // namespace
}  // namespace alpa::sharding
