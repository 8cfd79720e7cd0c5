// The checker on hand-worked examples: costs with edges, memory of overlapping and touching
// (half-open) intervals, forbidden entries, 128-bit totals, and malformed choices.
#include "solver/checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa::solver {
namespace {

using ::testing::HasSubstr;

// Three nodes of two strategies; edges 0 -> 1 and 2 -> 1.
//   node 0: [0, 3), costs {1, 2},  usages {5, 50}
//   node 1: [2, 5), costs {10, 20}, usages {7, 70}
//   node 2: [3, 6), costs {100, 200}, usages {4, 40}
//   edge 0 -> 1: [[0, 1000], [3000, 4000]];  edge 2 -> 1: [[10000, 20000], [30000, 40000]]
Request ThreeNodes() {
  Request request;
  request.nodes = {Node{{0, 3}, {1, 2}, {5, 50}}, Node{{2, 5}, {10, 20}, {7, 70}},
                   Node{{3, 6}, {100, 200}, {4, 40}}};
  request.edges = {Edge{0, 1, {0, 1000, 3000, 4000}}, Edge{2, 1, {10000, 20000, 30000, 40000}}};
  return request;
}

TEST(EvaluateChoice, CostWithEdges) {
  const Request request = ThreeNodes();
  // s = (1, 0, 1): nodes 2 + 10 + 200, edge 0 -> 1 entry [1][0] = 3000, edge 2 -> 1 entry
  // [1][0] = 30000.
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{1, 0, 1});
  ASSERT_TRUE(evaluation.ok()) << evaluation.status().message();
  EXPECT_EQ(evaluation->cost, 2 + 10 + 200 + 3000 + 30000);
  EXPECT_EQ(evaluation->num_forbidden, 0);
  EXPECT_EQ(evaluation->first_forbidden, "");
  EXPECT_TRUE(evaluation->feasible());
}

TEST(EvaluateChoice, MemoryOfOverlappingIntervals) {
  Request request = ThreeNodes();
  // s = (0, 1, 0): usage 5 on [0, 3), 70 on [2, 5), 4 on [3, 6):
  //   t = 0, 1: 5;  t = 2: 5 + 70 = 75;  t = 3, 4: 70 + 4 = 74 (node 0 has left at 3);  t = 5: 4.
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 1, 0});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->peak_usage, 75);
  EXPECT_EQ(evaluation->peak_time, 2);
  EXPECT_TRUE(evaluation->fits_memory);  // no limit

  request.usage_limit = 75;  // the limit is inclusive
  evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 1, 0});
  EXPECT_TRUE(evaluation->fits_memory);
  request.usage_limit = 74;
  evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 1, 0});
  EXPECT_FALSE(evaluation->fits_memory);
  EXPECT_FALSE(evaluation->feasible());
}

TEST(EvaluateChoice, HalfOpenEndsDoNotOverlap) {
  // [0, 3) and [3, 5) never live together; the peak is 10 (first at time 0), not 20.
  Request request;
  request.nodes = {Node{{0, 3}, {0}, {10}}, Node{{3, 5}, {0}, {10}}};
  request.usage_limit = 10;
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 0});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->peak_usage, 10);
  EXPECT_EQ(evaluation->peak_time, 0);
  EXPECT_TRUE(evaluation->fits_memory);
}

TEST(EvaluateChoice, EmptyIntervalsOccupyNothing) {
  Request request;
  request.nodes = {Node{{4, 4}, {0}, {1000}}, Node{{5, 2}, {0}, {1000}}, Node{{1, 2}, {0}, {3}}};
  request.usage_limit = 3;
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 0, 0});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->peak_usage, 3);
  EXPECT_EQ(evaluation->peak_time, 1);
  EXPECT_TRUE(evaluation->feasible());
}

TEST(EvaluateChoice, NothingLive) {
  Result<Evaluation> evaluation = EvaluateChoice(Request{}, std::vector<int64_t>{});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->cost, 0);
  EXPECT_EQ(evaluation->peak_usage, 0);
  EXPECT_EQ(evaluation->peak_time, 0);
  EXPECT_TRUE(evaluation->feasible());
}

TEST(EvaluateChoice, ForbiddenNodeAndEdgeEntries) {
  Request request = ThreeNodes();
  request.nodes[2].costs[1] = kForbiddenCost;
  request.edges[0].costs[3] = kForbiddenCost + 5;  // [1][1]
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{1, 1, 1});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->num_forbidden, 2);
  EXPECT_EQ(evaluation->first_forbidden, "node 2 strategy 1 costs 1000000000000000000");
  EXPECT_FALSE(evaluation->feasible());
  // 128-bit: 2 + 20 + 1e18 + (1e18 + 5) + 40000.
  EXPECT_EQ(evaluation->cost, TotalCost{2} * kForbiddenCost + 2 + 20 + 5 + 40000);

  evaluation = EvaluateChoice(request, std::vector<int64_t>{1, 1, 0});
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->num_forbidden, 1);
  EXPECT_EQ(evaluation->first_forbidden, "edge 0 (0 -> 1) entry [1][1] costs 1000000000000000005");
}

TEST(EvaluateChoice, TotalsPast64Bits) {
  Request request;
  for (int v = 0; v < 20; ++v) request.nodes.push_back(Node{{0, 1}, {kForbiddenCost}, {0}});
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>(20, 0));
  ASSERT_TRUE(evaluation.ok());
  EXPECT_EQ(evaluation->cost, TotalCost{20} * kForbiddenCost);
  EXPECT_EQ(TotalCostString(evaluation->cost), "20000000000000000000");
  EXPECT_EQ(evaluation->num_forbidden, 20);
}

TEST(EvaluateChoice, MalformedChoices) {
  const Request request = ThreeNodes();
  Result<Evaluation> evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 0});
  ASSERT_FALSE(evaluation.ok());
  EXPECT_EQ(evaluation.status().message(),
            "the choice has 2 entries for 3 nodes; give one strategy per node");
  evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 2, 0});
  ASSERT_FALSE(evaluation.ok());
  EXPECT_EQ(evaluation.status().message(),
            "node 1: strategy 2 does not exist (the node has 2: 0 to 1)");
  evaluation = EvaluateChoice(request, std::vector<int64_t>{0, 0, -1});
  ASSERT_FALSE(evaluation.ok());
  EXPECT_THAT(evaluation.status().message(), HasSubstr("node 2: strategy -1 does not exist"));
}

}  // namespace
}  // namespace alpa::solver
