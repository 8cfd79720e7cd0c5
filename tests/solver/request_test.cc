// The request's plain checks: exact decimal totals, status names, and a validation message for
// every kind of malformed request that names the node or edge.
#include "solver/request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <optional>

namespace alpa::solver {
namespace {

using ::testing::HasSubstr;

TEST(TotalCostString, ExactDecimals) {
  EXPECT_EQ(TotalCostString(0), "0");
  EXPECT_EQ(TotalCostString(7), "7");
  EXPECT_EQ(TotalCostString(-42), "-42");
  EXPECT_EQ(TotalCostString(TotalCost{std::numeric_limits<int64_t>::max()} + 1),
            "9223372036854775808");
  // 25 forbidden entries of 1e18 sum to 2.5e19, past 2^64.
  EXPECT_EQ(TotalCostString(TotalCost{kForbiddenCost} * 25), "25000000000000000000");
  EXPECT_EQ(TotalCostString(std::numeric_limits<TotalCost>::max()),
            "170141183460469231731687303715884105727");
  EXPECT_EQ(TotalCostString(std::numeric_limits<TotalCost>::min()),
            "-170141183460469231731687303715884105728");
}

TEST(WithinGap, ComparesTheGapWithTheFractionOfTheCost) {
  EXPECT_TRUE(WithinGap(1000, 1000, 0));
  EXPECT_TRUE(WithinGap(1000, 1200, 0));  // a bound above the cost proves it optimal
  EXPECT_FALSE(WithinGap(1000, 999, 0));
  EXPECT_TRUE(WithinGap(1000, 999, 1e-3));
  EXPECT_FALSE(WithinGap(1000, 998, 1e-3));
  EXPECT_FALSE(WithinGap(1000, std::nullopt, 0.5));  // no bound proves nothing
  // Near 2^63 the difference is taken in doubles, without overflow.
  const TotalCost huge = TotalCost{1} << 100;
  EXPECT_TRUE(WithinGap(huge, huge - (huge >> 12), 1e-3));
  EXPECT_FALSE(WithinGap(huge, -huge, 1e-3));
  // An answer is proven within a gap only with a solution.
  Answer answer;
  answer.cost = 1000;
  answer.lower_bound = 999;
  EXPECT_FALSE(answer.ProvenWithin(1e-3));
  answer.status = SolveStatus::kFeasible;
  EXPECT_TRUE(answer.ProvenWithin(1e-3));
  EXPECT_FALSE(answer.ProvenWithin(0));
}

TEST(SolveStatusName, Names) {
  EXPECT_EQ(SolveStatusName(SolveStatus::kOptimal), "optimal");
  EXPECT_EQ(SolveStatusName(SolveStatus::kFeasible), "feasible");
  EXPECT_EQ(SolveStatusName(SolveStatus::kInfeasible), "infeasible");
  EXPECT_EQ(SolveStatusName(SolveStatus::kNoSolution), "no_solution");
}

// Two nodes of 2 and 3 strategies, one edge between them.
Request TwoNodes() {
  Request request;
  request.nodes = {Node{{0, 2}, {1, 2}, {10, 20}}, Node{{1, 3}, {3, 4, 5}, {1, 1, 1}}};
  request.edges = {Edge{0, 1, {0, 1, 2, 3, 4, 5}}};
  request.usage_limit = 100;
  return request;
}

std::string ErrorOf(const Request& request) {
  const Status status = ValidateRequest(request);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(ValidateRequest, AcceptsAValidRequest) {
  EXPECT_TRUE(ValidateRequest(TwoNodes()).ok());
  EXPECT_TRUE(ValidateRequest(Request{}).ok());  // nothing to choose
}

TEST(ValidateRequest, NodeErrorsNameTheNode) {
  Request request = TwoNodes();
  request.nodes[1].costs.clear();
  request.nodes[1].usages.clear();
  EXPECT_THAT(ErrorOf(request), HasSubstr("node 1: no strategies"));

  request = TwoNodes();
  request.nodes[1].usages.pop_back();
  EXPECT_EQ(ErrorOf(request), "node 1: 3 costs but 2 usages; give one of each per strategy");

  request = TwoNodes();
  request.nodes[0].costs[1] = -3;
  EXPECT_EQ(ErrorOf(request), "node 0: cost of strategy 1 is -3; costs must be >= 0");

  request = TwoNodes();
  request.nodes[1].usages[2] = -1;
  EXPECT_EQ(ErrorOf(request), "node 1: usage of strategy 2 is -1; usages must be >= 0");
}

TEST(ValidateRequest, EdgeErrorsNameTheEdge) {
  Request request = TwoNodes();
  request.edges[0].to = 2;
  EXPECT_EQ(ErrorOf(request), "edge 0: node 2 does not exist (the problem has 2 nodes)");

  request = TwoNodes();
  request.edges[0].from = -1;
  EXPECT_THAT(ErrorOf(request), HasSubstr("edge 0: node -1 does not exist"));

  request = TwoNodes();
  request.edges[0] = Edge{1, 1, {0, 0, 0, 0, 0, 0, 0, 0, 0}};
  EXPECT_THAT(ErrorOf(request), HasSubstr("edge 0: connects node 1 to itself"));

  request = TwoNodes();
  request.edges[0].costs.pop_back();
  EXPECT_EQ(ErrorOf(request), "edge 0 (0 -> 1): 5 costs, expected 2 x 3 = 6");

  request = TwoNodes();
  request.edges[0].costs[4] = -7;  // row 1, column 1 of a 2 x 3 matrix
  EXPECT_EQ(ErrorOf(request), "edge 0 (0 -> 1): cost [1][1] is -7; costs must be >= 0");
}

TEST(ValidateRequest, UsageLimit) {
  Request request = TwoNodes();
  request.usage_limit = -1;
  EXPECT_THAT(ErrorOf(request), HasSubstr("usage_limit is -1"));
  request.usage_limit.reset();
  EXPECT_TRUE(ValidateRequest(request).ok());
}

}  // namespace
}  // namespace alpa::solver
