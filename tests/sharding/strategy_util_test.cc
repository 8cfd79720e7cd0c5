#include "sharding/strategy_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cost/compute_cost.h"
#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Specs(const std::vector<DimAxes>& splits) {
  std::vector<std::string> out;
  for (const DimAxes& axes : splits) out.push_back(ToString(ShardingSpec{axes, {}}));
  return out;
}

TEST(EnumerateDimSplitsTest, EveryAssignmentOfAxesToDimensionsInOrder) {
  // Axis 0 takes dimension 0, 1, none; axis 1 likewise under each: Alpa's 1-D splits, its 2-D
  // splits both ways and the flattened-mesh splits S01.
  EXPECT_THAT(Specs(EnumerateDimSplits({8, 16}, {2, 4})),
              ElementsAre("[S01,R]", "[S0,S1]", "[S0,R]", "[S1,S0]", "[R,S01]", "[R,S0]", "[S1,R]",
                          "[R,S1]"));
}

// The partitioner lowers even splits alone: a split whose tiles do not divide the dimension is
// never offered.
TEST(EnumerateDimSplitsTest, TilesDivideTheirDimension) {
  EXPECT_THAT(EnumerateDimSplits({6}, {4}), IsEmpty());
  EXPECT_THAT(Specs(EnumerateDimSplits({8}, {4})), ElementsAre("[S0]"));
  EXPECT_THAT(EnumerateDimSplits({3}, {4}), IsEmpty());
  EXPECT_THAT(EnumerateDimSplits({0, 1}, {2}), IsEmpty());
}

TEST(EnumerateDimSplitsTest, AxesOfSizeOneNeverSplit) {
  EXPECT_THAT(Specs(EnumerateDimSplits({8}, {1, 4})), ElementsAre("[S1]"));
  EXPECT_THAT(EnumerateDimSplits({8}, {1}), IsEmpty());
}

TEST(EnumerateDimSplitsTest, MaximalKeepsOnlyAssignmentsNoUnusedAxisCanJoin) {
  // [2, 4] on (2, 4): axis 1 fits dimension 1 only, and then axis 0 fits dimension 0 only; with
  // axis 0 on dimension 1 (2 tiles), axis 1 fits nowhere (8 > 4, 4 > 2).
  EXPECT_THAT(Specs(EnumerateDimSplits({2, 4}, {2, 4}, {.maximal_only = true})),
              ElementsAre("[S0,S1]", "[R,S0]"));
}

TEST(EnumerateDimSplitsTest, ExclusiveGroupsSplitOneMemberAtMost) {
  DimSplitOptions options;
  options.exclusive_groups = {{0, 1}};
  EXPECT_THAT(Specs(EnumerateDimSplits({4, 4}, {2, 2}, options)),
              ElementsAre("[S01,R]", "[S0,R]", "[R,S01]", "[R,S0]", "[S1,R]", "[R,S1]"));
  // Maximality respects the group: [S0,R] cannot take axis 1 on dimension 1.
  options.maximal_only = true;
  EXPECT_THAT(Specs(EnumerateDimSplits({4, 4}, {2, 2}, options)),
              ElementsAre("[S01,R]", "[R,S01]"));
  EXPECT_THAT(Specs(EnumerateDimSplits({2, 4}, {2, 2}, options)),
              ElementsAre("[S0,R]", "[R,S01]", "[S1,R]"));
}

TEST(StrategyUtilTest, SizesAndBytes) {
  const std::vector<int64_t> mesh = {2, 4};
  EXPECT_EQ(AxesSize(mesh, {}), 1);
  EXPECT_EQ(AxesSize(mesh, {0, 1}), 8);
  EXPECT_EQ(SplitAxesSize(ShardingSpec{{{1}, {}}, {0}}, mesh), 4);  // partial axes excluded
  const ir::Shape f32 = ir::Shape::Array(ir::DType::kF32, {10, 16});
  // ceil(10 / 4) * 16 / 2 elements of 4 bytes: padded tiles count whole.
  EXPECT_EQ(TileBytes(ShardingSpec{{{1}, {0}}, {}}, f32, mesh), 3 * 8 * 4);
  const ir::Shape tuple = ir::Shape::Tuple(
      {f32, ir::Shape::Token(), ir::Shape::Tuple({ir::Shape::Array(ir::DType::kF16, {8})})});
  const LeafSpecs replicated = ReplicatedLeaves(tuple);
  ASSERT_EQ(replicated.size(), 3u);
  EXPECT_EQ(replicated[0].rank(), 2);
  EXPECT_EQ(replicated[1].rank(), 0);
  EXPECT_EQ(LeafBytes(replicated, tuple, mesh), 10 * 16 * 4 + 8 * 2);
  EXPECT_EQ(LeafBytes({ShardingSpec{{{0, 1}, {}}, {}}, replicated[1], ShardingSpec{{{1}}, {}}},
                      tuple, mesh),
            2 * 16 * 4 + 2 * 2);
}

TEST(StrategyUtilTest, Names) {
  EXPECT_EQ(AxisGroupsString({{0}, {1}}), "{0,1}");
  EXPECT_EQ(AxisGroupsString({{0, 1}, {2}}), "{01,2}");
  EXPECT_EQ(AxisGroupsString({{10}}), "{(10)}");
  EXPECT_EQ(AxesString({1}), "1");
  EXPECT_EQ(AxesString({0, 2}), "{0,2}");
}

TEST(StrategyUtilTest, CollectivesArePricedByThePricer) {
  testing::MeshEnv env({2, 4});
  Strategy strategy;
  AddCollective(strategy, env.ctx(), cost::CollectiveKind::kAllReduce, {}, 1024);
  EXPECT_THAT(strategy.collectives, IsEmpty());
  AddCollective(strategy, env.ctx(), cost::CollectiveKind::kAllReduce, {1}, 1024);
  AddCollective(strategy, env.ctx(), cost::CollectiveKind::kAllGather, {0, 1}, 4096);
  ASSERT_EQ(strategy.collectives.size(), 2u);
  EXPECT_EQ(strategy.collectives[1],
            (StrategyCollective{cost::CollectiveKind::kAllGather, {0, 1}, 4096}));
  const double expected =
      env.pricer().StepSeconds({cost::CollectiveKind::kAllReduce, {1}, 1024}) +
      env.pricer().StepSeconds({cost::CollectiveKind::kAllGather, {0, 1}, 4096});
  EXPECT_GT(expected, 0);
  EXPECT_DOUBLE_EQ(strategy.communication_seconds, expected);
}

TEST(StrategyUtilTest, InstructionSecondsIsTheRooflineOfTheWholeInstruction) {
  testing::MeshEnv env({4});
  auto module = testing::ParseVerified(R"(HloModule m
ENTRY e {
  a = f32[256,512] parameter(0)
  b = f32[512,128] parameter(1)
  ROOT d = f32[256,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  const ir::Instruction& dot = testing::Named(*module, "d");
  Result<double> seconds = InstructionSeconds(dot, env.ctx());
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_DOUBLE_EQ(*seconds, 2.0 * 256 * 512 * 128 / 1e12);  // compute bound at 1 TFLOP/s
}

}  // namespace
}  // namespace alpa::sharding
