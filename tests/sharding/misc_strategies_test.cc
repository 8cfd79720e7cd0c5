#include "sharding/misc_strategies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/sharding/follow_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ExpectValidSpecs;
using testing::FollowTestEnv;
using testing::Spec;

constexpr std::string_view kMisc = R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
lt1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
twice {
  a = f32[8,16] parameter(0)
  ROOT s = f32[8,16] add(a, a)
}
nothing {
  ROOT t = () tuple()
}
ENTRY main {
  x = f32[8,16] parameter(0)
  k = s32[8,16] parameter(1)
  srt = f32[8,16] sort(x), dimensions={1}, to_apply=lt1
  pair = (f32[8,16], s32[8,16]) sort(x, k), dimensions={0}, to_apply=lt
  top = (f32[8,2], s32[8,2]) topk(x), k=2, largest=true
  mark = f32[8,16] custom-call(x), custom_call_target="alpa_layer_boundary", frontend_attributes={layer="0",pass="forward"}
  odd = f32[8,16] custom-call(x), custom_call_target="my_kernel"
  wsc = f32[8,16] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
  cl = f32[8,16] call(x), to_apply=twice
  ar = f32[8,16] all-reduce(x), replica_groups={}, to_apply=add
  tok = token[] after-all()
  empty = () call(), to_apply=nothing
  ROOT t = (f32[8,16]) tuple(srt)
}
)";

class MiscStrategiesTest : public ::testing::Test {
 protected:
  MiscStrategiesTest() { env.Parse(kMisc); }

  StrategySet Run(std::string_view name, bool replicate_unknown_ops = false) {
    StrategyContext ctx = env.ctx;
    ctx.options.replicate_unknown_ops = replicate_unknown_ops;
    Result<StrategySet> set = MiscStrategies(env.Get(name), ctx);
    EXPECT_TRUE(set.ok()) << set.status().message();
    if (!set.ok()) return {};
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    return std::move(set).value();
  }

  FollowTestEnv env{{2, 4}};
};

TEST_F(MiscStrategiesTest, SortFollowsWithTheSortedDimUnsplit) {
  env.SetSpecs("x", {Spec({{0}, {1}}), Spec({{}, {}}, {0}), Spec({{0}, {}})});
  const StrategySet set = Run("srt");
  EXPECT_EQ(set.follows_operand, 0);
  ASSERT_EQ(set.strategies.size(), 3u);
  EXPECT_EQ(set.strategies[0].operands[0], LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{0}, {}})});
  EXPECT_EQ(set.strategies[1].output, LeafSpecs{Spec({{}, {}})}) << "partial sums are summed";
  EXPECT_EQ(set.strategies[2].output, LeafSpecs{Spec({{0}, {}})});
}

TEST_F(MiscStrategiesTest, SortOfKeysAndValuesGivesEveryLeafTheSpec) {
  env.SetSpecs("k", {Spec({{0}, {1}})});
  const StrategySet set = Run("pair");
  EXPECT_EQ(set.follows_operand, 1);
  ASSERT_EQ(set.strategies.size(), 1u);
  const ShardingSpec spec = Spec({{}, {1}});
  EXPECT_EQ(set.strategies[0].output, (LeafSpecs{spec, spec}));
  EXPECT_EQ(set.strategies[0].operands[0], LeafSpecs{spec});
}

TEST_F(MiscStrategiesTest, TopKUnsplitsTheLastDim) {
  env.SetSpecs("x", {Spec({{0}, {1}})});
  const StrategySet set = Run("top");
  ASSERT_EQ(set.strategies.size(), 1u);
  EXPECT_EQ(set.strategies[0].output, (LeafSpecs{Spec({{0}, {}}), Spec({{0}, {}})}));
}

// A layer boundary, and JAX's with_sharding_constraint (a "Sharding" custom-call, whose own
// sharding= is a pin read by PinsFromHloShardings): the value as it is, in any layout.
TEST_F(MiscStrategiesTest, LayerBoundaryAndShardingConstraintAreIdentities) {
  const std::vector<ShardingSpec> specs = {Spec({{0}, {1}}), Spec({{}, {}}, {1})};
  env.SetSpecs("x", specs);
  for (std::string_view name : {"mark", "wsc"}) {
    const StrategySet set = Run(name);
    EXPECT_EQ(set.follows_operand, 0) << name;
    ASSERT_EQ(set.strategies.size(), 2u) << name;
    for (size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(set.strategies[i].output, LeafSpecs{specs[i]}) << name;
      EXPECT_EQ(set.strategies[i].operands[0], LeafSpecs{specs[i]}) << name;
    }
  }
}

TEST_F(MiscStrategiesTest, UnknownCustomCallIsAnErrorUnlessAllowed) {
  Result<StrategySet> refused = MiscStrategies(env.Get("odd"), env.ctx);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  const std::string& message = refused.status().message();
  const std::string_view text = kMisc.substr(0, kMisc.find("  odd ="));
  const std::string place =
      "test.hlo:" + std::to_string(std::count(text.begin(), text.end(), '\n') + 1) + ":3: ";
  EXPECT_EQ(message.rfind(place, 0), 0u) << message;
  EXPECT_NE(message.find("custom-call %odd"), std::string::npos) << message;
  EXPECT_NE(message.find("\"my_kernel\""), std::string::npos) << message;

  const StrategySet set = Run("odd", /*replicate_unknown_ops=*/true);
  ASSERT_EQ(set.strategies.size(), 1u);
  EXPECT_EQ(set.strategies[0].output, LeafSpecs{Spec({{}, {}})});
  EXPECT_EQ(set.strategies[0].operands[0], LeafSpecs{Spec({{}, {}})});
}

// A collective of the input (an already partitioned module) cannot be partitioned again: it is
// refused by name, and priced replicated only when asked.
TEST_F(MiscStrategiesTest, ACollectiveOfTheInputIsRefusedUnlessAllowed) {
  Result<StrategySet> refused = MiscStrategies(env.Get("ar"), env.ctx);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("all-reduce %ar: the SPMD partitioner cannot run"),
            std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(
      Run("ar", /*replicate_unknown_ops=*/true).strategies[0].output[0].IsFullyReplicated());
}

TEST_F(MiscStrategiesTest, ControlFlowAndTokensAreReplicatedUnits) {
  env.SetSpecs("x", {Spec({{0}, {1}})});
  for (std::string_view name : {"cl", "tok"}) {
    const StrategySet set = Run(name);
    EXPECT_EQ(set.follows_operand, -1) << name;
    ASSERT_EQ(set.strategies.size(), 1u) << name;
    const Strategy& strategy = set.strategies[0];
    EXPECT_TRUE(strategy.output[0].IsFullyReplicated()) << name;
    for (const LeafSpecs& operand : strategy.operands) {
      EXPECT_TRUE(operand[0].IsFullyReplicated()) << name;
    }
  }
  EXPECT_EQ(Run("cl").strategies[0].memory_bytes, 8 * 16 * 4);
}

// JAX leaves calls of helpers that return nothing (`jit_relu_.4 = () call()` in a scanned
// Flax model's step): a unit with no leaves, which must not be read as having one.
TEST_F(MiscStrategiesTest, ACallReturningAnEmptyTupleIsAUnitWithNoLeaves) {
  const StrategySet set = Run("empty");
  ASSERT_EQ(set.strategies.size(), 1u);
  EXPECT_TRUE(set.strategies[0].output.empty());
  EXPECT_EQ(set.strategies[0].memory_bytes, 0);
}

}  // namespace
}  // namespace alpa::sharding
