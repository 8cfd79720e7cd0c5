#include "sharding/cost_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

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

  ASSERT_EQ(problem.request.nodes.size(), 2u);
  EXPECT_THAT(problem.solver_node_of, ElementsAre(0, 0, 0, 1));
  const solver::Node& group = problem.request.nodes[0];
  EXPECT_THAT(group.costs, ElementsAre(1 + 10 + 100 + 1000, 2 + 20 + 200 + 4000));
  // Members 0 and 1 overlap at t = 1 (4 + 4 and 2 + 2); member 2 is alone later.
  EXPECT_THAT(group.usages, ElementsAre(8, 4));
  EXPECT_EQ(group.interval, (solver::Interval{0, 6}));
  ASSERT_EQ(problem.request.edges.size(), 1u);
  EXPECT_EQ(problem.request.edges[0].from, 1);
  EXPECT_EQ(problem.request.edges[0].to, 0);
  EXPECT_THAT(problem.request.edges[0].costs, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(ExpandChoice(problem, {1, 2}), ElementsAre(1, 1, 1, 2));
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
