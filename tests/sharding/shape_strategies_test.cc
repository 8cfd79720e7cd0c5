#include "sharding/shape_strategies.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/sharding/all_specs.h"
#include "tests/sharding/follow_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ExpectValidSpecs;
using testing::FollowTestEnv;
using testing::Spec;

constexpr std::string_view kShapes = R"(
HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  big = f32[64,32] parameter(1)
  bias = f32[16] parameter(2)
  c = f32[] parameter(3)
  tr = f32[16,8] transpose(x), dimensions={1,0}
  rev = f32[8,16] reverse(x), dimensions={1}
  flat = f32[128] reshape(x)
  swap = f32[16,8] reshape(x)
  bc = f32[128] bitcast(x)
  cp = f32[8,16] copy(x)
  bbig = f32[2,64,32] broadcast(big), dimensions={1,2}
  bbias = f32[8,16] broadcast(bias), dimensions={1}
  bc0 = f32[8,16] broadcast(c), dimensions={}
  ROOT t = (f32[16,8]) tuple(tr)
}
)";

class ShapeStrategiesTest : public ::testing::Test {
 protected:
  ShapeStrategiesTest() { env.Parse(kShapes); }

  StrategySet Run(std::string_view name) {
    Result<StrategySet> set = ShapeStrategies(env.Get(name), env.ctx);
    EXPECT_TRUE(set.ok()) << set.status().message();
    if (!set.ok()) return {};
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    return std::move(set).value();
  }

  FollowTestEnv env{{2, 4}};
};

TEST_F(ShapeStrategiesTest, TransposePermutesTheSpec) {
  env.SetSpecs("x", {Spec({{0}, {}}), Spec({{0}, {1}}, {}), Spec({{}, {1}}, {0})});
  const StrategySet set = Run("tr");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 3u);
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{}, {0}})});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{1}, {0}})});
  EXPECT_EQ(set.strategies[2].output, LeafSpecs{Spec({{1}, {}}, {0})}) << "partial passes";
  EXPECT_EQ(set.strategies[2].operands[0], LeafSpecs{Spec({{}, {1}}, {0})});
}

TEST_F(ShapeStrategiesTest, ReverseUnsplitsReversedDims) {
  env.SetSpecs("x", {Spec({{0}, {1}})});
  const StrategySet set = Run("rev");
  ASSERT_EQ(set.strategies.size(), 1u);
  const Strategy& strategy = set.strategies[0];
  EXPECT_EQ(strategy.operands[0], LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(strategy.output, LeafSpecs{Spec({{0}, {}})});
}

TEST_F(ShapeStrategiesTest, ReshapeFollowsMajorFactorAndReplicatesMinorSplits) {
  env.SetSpecs("x", {Spec({{0}, {}}), Spec({{}, {1}})});
  const StrategySet flat = Run("flat");
  EXPECT_EQ(flat.follows_operand, 0);
  ASSERT_EQ(flat.strategies.size(), 2u);
  EXPECT_EQ(flat.strategies[0].output, LeafSpecs{Spec({{0}})});
  EXPECT_EQ(flat.strategies[0].operands[0], LeafSpecs{Spec({{0}, {}})}) << "no resharding";
  EXPECT_EQ(flat.strategies[1].output, LeafSpecs{Spec({{}})});
  EXPECT_EQ(flat.strategies[1].operands[0], LeafSpecs{Spec({{}, {}})});

  const StrategySet swap = Run("swap");
  EXPECT_EQ(swap.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(swap.strategies[1].output, LeafSpecs{Spec({{}, {}})});
  EXPECT_EQ(swap.strategies[1].operands[0], LeafSpecs{Spec({{}, {}})}) << "S1 must replicate";

  EXPECT_EQ(Run("bc").strategies[0].output, LeafSpecs{Spec({{0}})}) << "bitcast reshapes";
}

TEST(ReshapeSpecs, Examples) {
  const std::vector<int64_t> mesh = {2, 4};
  struct Case {
    ShardingSpec spec;
    std::vector<int64_t> in, out;
    ShardingSpec needed, result;
  };
  const std::vector<Case> cases = {
      {Spec({{0}, {}}), {8, 16}, {128}, Spec({{0}, {}}), Spec({{0}})},
      {Spec({{}, {1}}), {8, 16}, {128}, Spec({{}, {}}), Spec({{}})},
      {Spec({{}, {1}}), {8, 16}, {16, 8}, Spec({{}, {}}), Spec({{}, {}})},
      {Spec({{0}, {}}), {8, 16}, {16, 8}, Spec({{0}, {}}), Spec({{0}, {}})},
      {Spec({{0}, {1}, {}}), {2, 4, 16}, {128}, Spec({{0}, {1}, {}}), Spec({{0, 1}})},
      {Spec({{0, 1}}), {128}, {8, 16}, Spec({{0, 1}}), Spec({{0, 1}, {}})},
      {Spec({{0, 1}}), {128}, {4, 32}, Spec({{0}}), Spec({{0}, {}})},
      // Size-1 dims are skipped; a second group keeps its own split; partial axes pass.
      {Spec({{}, {1}, {}}, {0}),
       {1, 8, 6},
       {8, 2, 3},
       Spec({{}, {1}, {}}, {0}),
       Spec({{1}, {}, {}}, {0})},
      {Spec({{0}, {1}}), {8, 16}, {8, 4, 4}, Spec({{0}, {1}}), Spec({{0}, {1}, {}})},
      // An axis that does not divide its dim ends the walk.
      {Spec({{1}, {}}), {6, 4}, {24}, Spec({{}, {}}), Spec({{}})},
  };
  for (const Case& c : cases) {
    auto [needed, result] = ReshapeSpecs(c.spec, c.in, c.out, mesh);
    EXPECT_EQ(needed, c.needed) << ToString(c.spec);
    EXPECT_EQ(result, c.result) << ToString(c.spec);
  }
}

// Exhaustively on a 3-D mesh: every result is valid and the needed spec only drops axes.
TEST(ReshapeSpecs, EveryResultIsValid) {
  const std::vector<int64_t> mesh = {2, 2, 2};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> reshapes = {
      {{4, 8, 2}, {32, 2}}, {{4, 8, 2}, {2, 2, 16}}, {{4, 8, 2}, {64}}, {{4, 8, 2}, {8, 8}}};
  for (const auto& [in, out] : reshapes) {
    for (const ShardingSpec& spec : AllSpecs(3, 3, /*with_partial=*/true)) {
      if (!CheckSpec(spec, mesh, in).ok()) continue;
      auto [needed, result] = ReshapeSpecs(spec, in, out, mesh);
      EXPECT_TRUE(CheckSpec(needed, mesh, in).ok()) << ToString(spec);
      EXPECT_TRUE(CheckSpec(result, mesh, out).ok()) << ToString(spec);
      EXPECT_EQ(SplitAxesSize(needed, mesh), SplitAxesSize(result, mesh)) << ToString(spec);
      for (int64_t d = 0; d < needed.rank(); ++d) {
        const auto& kept = needed.dim_axes[static_cast<size_t>(d)];
        const auto& had = spec.dim_axes[static_cast<size_t>(d)];
        EXPECT_TRUE(std::equal(kept.begin(), kept.end(), had.begin())) << ToString(spec);
      }
    }
  }
}

TEST_F(ShapeStrategiesTest, CopyIsIdentity) {
  const ShardingSpec spec = Spec({{1}, {0}}, {});
  env.SetSpecs("x", {spec, Spec({{}, {}}, {0, 1})});
  const StrategySet set = Run("cp");
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{spec});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{}, {}}, {0, 1})});
}

TEST_F(ShapeStrategiesTest, BroadcastOfALargeOperandFollowsIt) {
  env.SetSpecs("big", {Spec({{0}, {1}}), Spec({{}, {}}, {1})});
  const StrategySet set = Run("bbig");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 2u);
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{}, {0}, {1}})});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{}, {}, {}}, {1})});
}

TEST_F(ShapeStrategiesTest, BroadcastOfASmallOperandSplitsNewDims) {
  const StrategySet bias = Run("bbias");
  EXPECT_EQ(bias.follows_operand, -1);
  ASSERT_FALSE(bias.strategies.empty());
  EXPECT_EQ(bias.strategies.back().output, LeafSpecs{Spec({{}, {}})}) << "replicated last";
  bool batch = false;
  bool hidden = false;
  for (const Strategy& strategy : bias.strategies) {
    if (strategy.output == LeafSpecs{Spec({{0}, {}})}) {
      batch = true;
      EXPECT_EQ(strategy.operands[0], LeafSpecs{Spec({{}})});
    }
    if (strategy.output == LeafSpecs{Spec({{0}, {1}})}) {
      hidden = true;
      EXPECT_EQ(strategy.operands[0], LeafSpecs{Spec({{1}})});
    }
  }
  EXPECT_TRUE(batch && hidden);

  const StrategySet scalar = Run("bc0");
  EXPECT_EQ(scalar.follows_operand, -1);
  EXPECT_GT(scalar.strategies.size(), 3u);
  for (const Strategy& strategy : scalar.strategies) {
    EXPECT_EQ(strategy.operands[0], LeafSpecs{ShardingSpec::Replicated(0)});
  }
}

}  // namespace
}  // namespace alpa::sharding
