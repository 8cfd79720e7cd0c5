#include "sharding/convolution_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using cost::CollectiveKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Generated {
  std::unique_ptr<ir::Module> module;
  StrategySet set;
  double full_seconds = 0;
};

// A module whose root `c` is a convolution of x (input) and k (kernel).
Generated Generate(const std::string& input, const std::string& kernel, const std::string& output,
                   const std::string& attributes, const testing::MeshEnv& env) {
  Generated g;
  g.module = testing::ParseVerified(
      "HloModule m\nENTRY e {\n  x = " + input + " parameter(0)\n  k = " + kernel +
      " parameter(1)\n  ROOT c = " + output + " convolution(x, k), " + attributes + "\n}");
  if (g.module == nullptr) return g;
  const ir::Instruction& conv = testing::Named(*g.module, "c");
  Result<StrategySet> set = ConvolutionStrategies(conv, env.ctx());
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  if (set.ok()) g.set = *set;
  g.full_seconds = *InstructionSeconds(conv, env.ctx());
  testing::ExpectWellFormed(g.set, conv, env.mesh_shape());
  return g;
}

// 3x3 convolution, NCHW input [8,16,32,32], kernel [I=16,O=32,3,3].
Generated Conv3x3(const testing::MeshEnv& env) {
  return Generate("f32[8,16,32,32]", "f32[16,32,3,3]", "f32[8,32,32,32]",
                  "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_io01->bf01", env);
}

// Whether the strategy computes on spatially split tiles (a reduce-scatter may still leave its
// summed output split on a spatial dimension: that needs no halo).
bool SplitsAnySpatialDim(const Strategy& s) {
  for (const ShardingSpec* spec : {&s.operands[0][0], &s.operands[1][0]}) {
    if (!spec->dim_axes[2].empty() || !spec->dim_axes[3].empty()) return true;
  }
  return false;
}

TEST(ConvolutionStrategiesTest, BatchSplitCommunicatesNothing) {
  testing::MeshEnv env({4});
  Generated g = Conv3x3(env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* batch = testing::FindStrategy(g.set, "SRRR = SRRR x RRRR @ {0}");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(ToString(batch->output[0]), "[S0,R,R,R]");
  EXPECT_EQ(ToString(batch->operands[0][0]), "[S0,R,R,R]");
  EXPECT_EQ(ToString(batch->operands[1][0]), "[R,R,R,R]");
  EXPECT_THAT(batch->collectives, IsEmpty());
  EXPECT_EQ(batch->communication_seconds, 0);
  EXPECT_DOUBLE_EQ(batch->compute_seconds, g.full_seconds / 4);
  // Output features: the kernel splits, no communication.
  const Strategy* out_feature = testing::FindStrategy(g.set, "RSRR = RRRR x RSRR @ {0}");
  ASSERT_NE(out_feature, nullptr);
  EXPECT_THAT(out_feature->collectives, IsEmpty());
  // Input features: the whole [8,32,32,32] output is all-reduced.
  const Strategy* in_feature =
      testing::FindStrategy(g.set, "RRRR = RSRR x SRRR @ {0} (allreduce @ 0)");
  ASSERT_NE(in_feature, nullptr);
  EXPECT_THAT(in_feature->collectives, ElementsAre(StrategyCollective{
                                           CollectiveKind::kAllReduce, {0}, 8 * 32 * 32 * 32 * 4}));
  EXPECT_NE(testing::FindStrategy(g.set, "RRRR = RSRR x SRRR @ {0} (partial @ 0)"), nullptr);
  EXPECT_EQ(g.set.strategies.back().name, "RRRR = RRRR x RRRR");
  EXPECT_DOUBLE_EQ(g.set.strategies.back().compute_seconds, g.full_seconds);
  // A 3x3 window would need halos: no spatial split.
  for (const Strategy& s : g.set.strategies) EXPECT_FALSE(SplitsAnySpatialDim(s)) << s.name;
}

TEST(ConvolutionStrategiesTest, TwoDimensionalMeshCombinesBatchAndFeatures) {
  testing::MeshEnv env({2, 4});
  Generated g = Conv3x3(env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* ss = testing::FindStrategy(g.set, "SSRR = SRRR x RSRR @ {0,1}");
  ASSERT_NE(ss, nullptr);
  EXPECT_THAT(ss->collectives, IsEmpty());
  // Batch over axis 0, input features over axis 1: the [4,32,32,32] tile is all-reduced.
  const Strategy* sr = testing::FindStrategy(g.set, "SRRR = SSRR x SRRR @ {0,1} (allreduce @ 1)");
  ASSERT_NE(sr, nullptr);
  EXPECT_THAT(sr->collectives, ElementsAre(StrategyCollective{
                                   CollectiveKind::kAllReduce, {1}, 4 * 32 * 32 * 32 * 4}));
  // As a matmul, N = 2 (batch, output feature), K = 1, with reduce-scatters onto D = 4 output
  // dimensions: 1 + N^R + (2+D)K((N+1)^R - N^R).
  EXPECT_EQ(g.set.strategies.size(), 35u);
}

TEST(ConvolutionStrategiesTest, PointwiseWindowsSplitSpatialDimensions) {
  testing::MeshEnv env({4});
  Generated g = Generate("f32[8,16,32,32]", "f32[16,32,1,1]", "f32[8,32,32,32]",
                         "window={size=1x1}, dim_labels=bf01_io01->bf01", env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* spatial = testing::FindStrategy(g.set, "RRSR = RRSR x RRRR @ {0}");
  ASSERT_NE(spatial, nullptr);
  EXPECT_EQ(ToString(spatial->output[0]), "[R,R,S0,R]");
  EXPECT_EQ(ToString(spatial->operands[0][0]), "[R,R,S0,R]");
  EXPECT_THAT(spatial->collectives, IsEmpty());
}

TEST(ConvolutionStrategiesTest, DepthwiseSplitsGroupsWithoutCommunication) {
  testing::MeshEnv env({4});
  Generated g = Generate("f32[8,16,32,32]", "f32[1,16,3,3]", "f32[8,16,32,32]",
                         "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_io01->bf01, "
                         "feature_group_count=16",
                         env);
  ASSERT_NE(g.module, nullptr);
  const Strategy* group = testing::FindStrategy(g.set, "RSbRR = RSbRR x RSbRR @ {0}");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(ToString(group->output[0]), "[R,S0,R,R]");
  EXPECT_EQ(ToString(group->operands[0][0]), "[R,S0,R,R]");
  EXPECT_EQ(ToString(group->operands[1][0]), "[R,S0,R,R]");
  EXPECT_NE(testing::FindStrategy(g.set, "SiRRR = SiRRR x RRRR @ {0}"), nullptr);
  for (const Strategy& s : g.set.strategies) EXPECT_THAT(s.collectives, IsEmpty()) << s.name;
}

TEST(ConvolutionStrategiesTest, GroupedConvolutionsSplitTheBatchOnly) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate("f32[8,16,8,8]", "f32[4,32,3,3]", "f32[8,32,8,8]",
                         "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_io01->bf01, "
                         "feature_group_count=4",
                         env);
  ASSERT_NE(g.module, nullptr);
  ASSERT_EQ(g.set.strategies.size(), 2u);
  EXPECT_EQ(ToString(g.set.strategies[0].output[0]), "[S01,R,R,R]");
  EXPECT_EQ(ToString(g.set.strategies[0].operands[1][0]), "[R,R,R,R]");
  EXPECT_TRUE(g.set.strategies[1].output[0].IsFullyReplicated());
}

TEST(ConvolutionStrategiesTest, DepthwiseFilterGradientSplitsBatchGroups) {
  // batch_group_count 2 = output features: input batch block g feeds output feature g.
  testing::MeshEnv env({2});
  Generated g = Generate("f32[4,3,5,5]", "f32[3,2,1,1]", "f32[2,2,5,5]",
                         "window={size=1x1}, dim_labels=bf01_io01->bf01, batch_group_count=2", env);
  ASSERT_NE(g.module, nullptr);
  ASSERT_EQ(g.set.strategies.size(), 2u);
  const Strategy& group = g.set.strategies[0];
  EXPECT_EQ(ToString(group.output[0]), "[R,S0,R,R]");
  EXPECT_EQ(ToString(group.operands[0][0]), "[S0,R,R,R]");
  EXPECT_EQ(ToString(group.operands[1][0]), "[R,S0,R,R]");
  EXPECT_THAT(group.collectives, IsEmpty());
}

TEST(ConvolutionStrategiesTest, OtherOpcodesAreUnimplemented) {
  testing::ExpectAnAddIsUnimplemented(ConvolutionStrategies);
}

}  // namespace
}  // namespace alpa::sharding
