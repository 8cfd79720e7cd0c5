#include "sharding/slice_strategies.h"

#include <gtest/gtest.h>

#include "tests/sharding/follow_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ExpectValidSpecs;
using testing::FollowTestEnv;
using testing::Spec;

constexpr std::string_view kSlices = R"(
HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8,8] parameter(1)
  u = f32[8,4] parameter(2)
  i = s32[] parameter(3)
  zero = f32[] constant(0)
  sl = f32[8,4] slice(x), slice={[0:8], [0:4]}
  whole = f32[8,16] slice(x), slice={[0:8], [0:16]}
  pd = f32[8,20] pad(x, zero), padding=0_0x2_2
  cat = f32[8,24] concatenate(x, y), dimensions={1}
  ds = f32[8,4] dynamic-slice(x, i, i), dynamic_slice_sizes={8,4}
  dus = f32[8,16] dynamic-update-slice(x, u, i, i)
  ROOT t = (f32[8,4]) tuple(sl)
}
)";

class SliceStrategiesTest : public ::testing::Test {
 protected:
  SliceStrategiesTest() { env.Parse(kSlices); }

  StrategySet Run(std::string_view name) {
    Result<StrategySet> set = SliceStrategies(env.Get(name), env.ctx);
    EXPECT_TRUE(set.ok()) << set.status().message();
    if (!set.ok()) return {};
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    return std::move(set).value();
  }

  FollowTestEnv env{{2, 4}};
};

TEST_F(SliceStrategiesTest, SliceDropsTheAxesOfSlicedDims) {
  env.SetSpecs("x", {Spec({{0}, {1}}), Spec({{1}, {}}, {0})});
  const StrategySet set = Run("sl");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 2u);
  EXPECT_EQ(set.strategies[0].operands[0], LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{1}, {}}, {0})}) << "partial passes";

  EXPECT_EQ(Run("whole").strategies[0].output, LeafSpecs{Spec({{0}, {1}})});
}

TEST_F(SliceStrategiesTest, PadUnsplitsPaddedDimsAndSumsPartials) {
  env.SetSpecs("x", {Spec({{0}, {1}}, {}), Spec({{1}, {}}, {0})});
  const StrategySet set = Run("pd");
  ASSERT_EQ(set.strategies.size(), 2u);
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{1}, {}})});
  EXPECT_EQ(set.strategies[1].operands[0], LeafSpecs{Spec({{1}, {}})});
  EXPECT_EQ(set.strategies[1].operands[1], LeafSpecs{ShardingSpec::Replicated(0)});
}

TEST_F(SliceStrategiesTest, ConcatenateFollowsOneOperandAndUnsplitsItsDim) {
  env.SetSpecs("x", {Spec({{0}, {}})});
  env.SetSpecs("y", {Spec({{0}, {1}}), Spec({{}, {}}, {1})});
  const StrategySet set = Run("cat");
  EXPECT_EQ(set.follows_operand, 1);
  ASSERT_EQ(set.strategies.size(), 2u);
  for (const LeafSpecs& operand : set.strategies[0].operands) {
    EXPECT_EQ(operand, LeafSpecs{Spec({{0}, {}})});
  }
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{}, {}}, {1})});
  EXPECT_EQ(set.strategies[1].operands[0], LeafSpecs{Spec({{}, {}}, {1})});
}

TEST_F(SliceStrategiesTest, DynamicSliceKeepsWholeDimsAndReplicatesIndices) {
  env.SetSpecs("x", {Spec({{0}, {1}}, {})});
  const StrategySet set = Run("ds");
  ASSERT_EQ(set.strategies.size(), 1u);
  const Strategy& strategy = set.strategies[0];
  EXPECT_EQ(strategy.output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(strategy.operands[1], LeafSpecs{ShardingSpec::Replicated(0)});
  EXPECT_EQ(strategy.operands[2], LeafSpecs{ShardingSpec::Replicated(0)});
}

TEST_F(SliceStrategiesTest, DynamicUpdateSliceNeedsTheUpdateInTheBufferSpec) {
  env.SetSpecs("u", {Spec({{1}, {}})});  // the buffer is followed whatever the update has
  env.SetSpecs("x", {Spec({{0}, {1}}), Spec({{}, {}}, {0})});
  const StrategySet set = Run("dus");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 2u);
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[0].operands[1], LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[1].operands[1], LeafSpecs{Spec({{}, {}}, {0})}) << "linear";
}

}  // namespace
}  // namespace alpa::sharding
