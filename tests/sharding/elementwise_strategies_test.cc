#include "sharding/elementwise_strategies.h"

#include <gtest/gtest.h>

#include "tests/sharding/follow_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ExpectValidSpecs;
using testing::FollowTestEnv;
using testing::Spec;

constexpr std::string_view kBinary = R"(
HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  p = pred[] parameter(2)
  c = f32[] parameter(3)
  add = f32[8,16] add(x, y)
  mul = f32[8,16] multiply(x, y)
  cmp = pred[8,16] compare(x, y), direction=LT
  pb = pred[8,16] broadcast(p), dimensions={}
  sel = f32[8,16] select(pb, x, y)
  sel_scalar = f32[8,16] select(p, x, y)
  clamp = f32[8,16] clamp(c, x, c)
  neg = f32[8,16] negate(x)
  half = f16[8,16] convert(x)
  int = s32[8,16] convert(x)
  bytes = u8[8,16,4] bitcast-convert(x)
  back = f32[8,16] bitcast-convert(bytes)
  cb = f32[8,16] broadcast(c), dimensions={}
  scaled = f32[8,16] multiply(cb, x)
  ROOT t = (f32[8,16]) tuple(add)
}
)";

class ElementwiseStrategiesTest : public ::testing::Test {
 protected:
  ElementwiseStrategiesTest() { env.Parse(kBinary); }

  StrategySet Run(std::string_view name) {
    Result<StrategySet> set = ElementwiseStrategies(env.Get(name), env.ctx);
    EXPECT_TRUE(set.ok()) << set.status().message();
    if (!set.ok()) return {};
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    return std::move(set).value();
  }

  FollowTestEnv env{{2, 4}};
};

TEST_F(ElementwiseStrategiesTest, AddFollowsTheOperandWithStrategies) {
  const std::vector<ShardingSpec> specs = {Spec({{0}, {}}), Spec({{}, {1}}), Spec({{0}, {1}})};
  env.SetSpecs("x", specs);
  const StrategySet set = Run("add");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 3u);
  for (size_t i = 0; i < specs.size(); ++i) {
    const Strategy& strategy = set.strategies[i];
    EXPECT_EQ(strategy.output, LeafSpecs{specs[i]});
    EXPECT_EQ(strategy.operands[0], LeafSpecs{specs[i]});
    EXPECT_EQ(strategy.operands[1], LeafSpecs{specs[i]}) << "y is needed in the same spec";
    EXPECT_EQ(strategy.memory_bytes, 8 * 16 * 4 / SplitAxesSize(specs[i], {2, 4}));
  }
  // Work is divided by the tiles: [S0,S1] (8 tiles) costs a quarter of [S0,R] (2 tiles).
  EXPECT_GT(set.strategies[0].compute_seconds, 0);
  EXPECT_DOUBLE_EQ(set.strategies[0].compute_seconds, 4 * set.strategies[2].compute_seconds);
}

TEST_F(ElementwiseStrategiesTest, FollowsTheMostSplitOperand) {
  env.SetSpecs("x", {Spec({{0}, {}}), Spec({{}, {}})});
  env.SetSpecs("y", {Spec({{0}, {1}})});
  EXPECT_EQ(Run("add").follows_operand, 1);
  // Same tiles: the one with more strategies, then the first.
  env.SetSpecs("y", {Spec({{}, {}}), Spec({{}, {}}), Spec({{0}, {}})});
  EXPECT_EQ(Run("add").follows_operand, 1);
  env.SetSpecs("y", {Spec({{0}, {}})});
  EXPECT_EQ(Run("add").follows_operand, 0);
  env.SetSpecs("x", {Spec({{0}, {}})});
  EXPECT_EQ(Run("add").follows_operand, 0);
}

TEST_F(ElementwiseStrategiesTest, ABroadcastIsNotFollowedOnATie) {
  env.SetSpecs("x", {Spec({{0}, {}})});
  env.SetSpecs("cb", {Spec({{0}, {}})});
  EXPECT_EQ(Run("scaled").follows_operand, 1);
}

TEST_F(ElementwiseStrategiesTest, AddSubtractNegateAndFloatConvertKeepPartialSums) {
  const ShardingSpec partial = Spec({{0}, {}}, {1});
  env.SetSpecs("x", {partial, Spec({{0}, {1}})});
  for (std::string_view name : {"add", "neg", "half"}) {
    const StrategySet set = Run(name);
    ASSERT_EQ(set.strategies.size(), 2u) << name;
    EXPECT_EQ(set.strategies[0].output, LeafSpecs{partial}) << name;
    for (const LeafSpecs& operand : set.strategies[0].operands) {
      EXPECT_EQ(operand, LeafSpecs{partial}) << name << ": every operand partial alike";
    }
  }
}

TEST_F(ElementwiseStrategiesTest, OtherOpsNeedNonPartialOperands) {
  const ShardingSpec partial = Spec({{0}, {}}, {1});
  const ShardingSpec summed = Spec({{0}, {}});
  env.SetSpecs("x", {partial});
  for (std::string_view name : {"mul", "cmp", "sel", "clamp", "int"}) {
    const StrategySet set = Run(name);
    ASSERT_EQ(set.strategies.size(), 1u) << name;
    EXPECT_EQ(set.follows_operand, name == "sel" || name == "clamp" ? 1 : 0) << name;
    EXPECT_EQ(set.strategies[0].output, LeafSpecs{summed}) << name;
    for (int64_t k = 0; k < env.Get(name).operand_count(); ++k) {
      const LeafSpecs& operand = set.strategies[0].operands[static_cast<size_t>(k)];
      EXPECT_TRUE(operand.front().partial_axes.empty()) << name << " operand " << k;
      if (env.Get(name).operand(k)->shape().rank() == 2) {
        EXPECT_EQ(operand, LeafSpecs{summed}) << name << " operand " << k;
      }
    }
  }
}

TEST_F(ElementwiseStrategiesTest, ScalarOperandsAreReplicated) {
  env.SetSpecs("x", {Spec({{0}, {1}})});
  for (std::string_view name : {"sel_scalar", "clamp"}) {
    const StrategySet set = Run(name);
    ASSERT_EQ(set.strategies.size(), 1u);
    const Strategy& strategy = set.strategies[0];
    EXPECT_EQ(strategy.output, LeafSpecs{Spec({{0}, {1}})}) << name;
    EXPECT_EQ(strategy.operands[0], LeafSpecs{ShardingSpec::Replicated(0)}) << name;
  }
  EXPECT_EQ(Run("clamp").strategies[0].operands[2], LeafSpecs{ShardingSpec::Replicated(0)});
}

TEST_F(ElementwiseStrategiesTest, BitcastConvertAddsOrRemovesAnUnsplitTrailingDim) {
  env.SetSpecs("x", {Spec({{0}, {1}})});
  StrategySet narrow = Run("bytes");
  ASSERT_EQ(narrow.strategies.size(), 1u);
  EXPECT_EQ(narrow.strategies[0].output, LeafSpecs{Spec({{0}, {1}, {}})});

  env.SetSpecs("bytes", {Spec({{0}, {}, {1}}), Spec({{}, {1}, {}})});
  StrategySet wide = Run("back");
  ASSERT_EQ(wide.strategies.size(), 2u);
  EXPECT_EQ(wide.strategies[0].operands[0], LeafSpecs{Spec({{0}, {}, {}})});
  EXPECT_EQ(wide.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(wide.strategies[1].output, LeafSpecs{Spec({{}, {1}})});
}

TEST_F(ElementwiseStrategiesTest, NamesAreStableAndReadable) {
  env.SetSpecs("x", {Spec({{0}, {}}, {1})});
  EXPECT_EQ(Run("cmp").strategies[0].name, "[S0,R] <- %x [S0,R] P1");
}

TEST(ElementwiseOpcodes, Covered) {
  EXPECT_TRUE(IsElementwiseStrategyOpcode(ir::Opcode::kAdd));
  EXPECT_TRUE(IsElementwiseStrategyOpcode(ir::Opcode::kTanh));
  EXPECT_TRUE(IsElementwiseStrategyOpcode(ir::Opcode::kSelect));
  EXPECT_TRUE(IsElementwiseStrategyOpcode(ir::Opcode::kMap));
  EXPECT_FALSE(IsElementwiseStrategyOpcode(ir::Opcode::kDot));
  EXPECT_FALSE(IsElementwiseStrategyOpcode(ir::Opcode::kCopy));
}

}  // namespace
}  // namespace alpa::sharding
