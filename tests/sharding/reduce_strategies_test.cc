#include "sharding/reduce_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using cost::CollectiveKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::string_view kReducers = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
add2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT p = pred[] compare(a, b), direction=GE
}
)";

// The data operands' strategies: one per spec, in this order.
const std::vector<ShardingSpec> kInputs = {
    {{{0}, {1}}, {}},    // [S0,S1]
    {{{0, 1}, {}}, {}},  // [S01,R]
    {{{}, {}}, {0}},     // [R,R] P0
    {{{}, {}}, {}},      // [R,R]
};

StrategySet InputSet() {
  StrategySet set;
  for (const ShardingSpec& spec : kInputs) {
    Strategy s;
    s.name = ToString(spec);
    s.output = {spec};
    set.strategies.push_back(std::move(s));
  }
  return set;
}

struct Generated {
  std::unique_ptr<ir::Module> module;
  StrategySet set;
  double full_seconds = 0;
};

// `entry` is the body of the entry computation; its root is `r`, its data operands x (and y).
Generated Generate(const std::string& entry,
                   Result<StrategySet> (*generator)(const ir::Instruction&, const StrategyContext&),
                   testing::MeshEnv& env) {
  Generated g;
  g.module = testing::ParseVerified(std::string(kReducers) + "ENTRY e {\n" + entry + "\n}");
  if (g.module == nullptr) return g;
  for (const char* name : {"x", "y"}) {
    if (const ir::Instruction* data = g.module->entry()->GetInstruction(name)) {
      env.sets[data] = InputSet();
    }
  }
  const ir::Instruction& root = testing::Named(*g.module, "r");
  Result<StrategySet> set = generator(root, env.ctx());
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  if (set.ok()) g.set = *set;
  g.full_seconds = *InstructionSeconds(root, env.ctx());
  testing::ExpectWellFormed(g.set, root, env.mesh_shape());
  // A follow set has one strategy per input strategy; a reduce that may leave partial sums
  // offers two for an input it cuts (and does not follow).
  if (g.set.follows_operand == 0) {
    EXPECT_EQ(g.set.strategies.size(), kInputs.size());
  }
  return g;
}

constexpr std::string_view kSumRows = R"(  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[8] reduce(x, zero), dimensions={1}, to_apply=)";

std::vector<std::string> Names(const StrategySet& set) {
  std::vector<std::string> names;
  for (const Strategy& s : set.strategies) names.push_back(s.name);
  return names;
}

TEST(ReduceStrategiesTest, SumMayLeaveReducedAxesPartialWhenAllowed) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(std::string(kSumRows) + "add", ReduceStrategies, env);
  ASSERT_NE(g.module, nullptr);
  // A cut sum is offered both ways, so the set does not follow its operand.
  EXPECT_THAT(Names(g.set), ElementsAre("[S0,S1] -> [S0] P1 (partial @ 1)",
                                        "[S0,S1] -> [S0] (reducescatter @ 1 to dim 0)",
                                        "[S0,S1] -> [S0] (allreduce @ 1)", "[S01,R] -> [S01]",
                                        "[R,R] P0 -> [R] P0", "[R,R] -> [R]"));
  EXPECT_EQ(g.set.follows_operand, -1);
  EXPECT_THAT(g.set.strategies[0].collectives, IsEmpty());
  // The [8/2] f32 tile: reduce-scattered over axis 1 into [S01], or all-reduced.
  EXPECT_EQ(ToString(g.set.strategies[1].output[0]), "[S01]");
  EXPECT_THAT(g.set.strategies[1].collectives,
              ElementsAre(StrategyCollective{CollectiveKind::kReduceScatter, {1}, 16}));
  EXPECT_THAT(g.set.strategies[2].collectives,
              ElementsAre(StrategyCollective{CollectiveKind::kAllReduce, {1}, 16}));
  // Init value replicated; compute divided by the axes splitting the input.
  EXPECT_EQ(g.set.strategies[0].operands[1][0].rank(), 0);
  EXPECT_DOUBLE_EQ(g.set.strategies[0].compute_seconds, g.full_seconds / 8);
  EXPECT_DOUBLE_EQ(g.set.strategies[4].compute_seconds, g.full_seconds);
  EXPECT_EQ(g.set.strategies[0].memory_bytes, 4 * 4);  // [8] over axis 0, f32
}

TEST(ReduceStrategiesTest, SumAllReducesWhenPartialOutputsAreOff) {
  testing::MeshEnv env({2, 4}, {.allow_partial_outputs = false});
  Generated g = Generate(std::string(kSumRows) + "add", ReduceStrategies, env);
  ASSERT_NE(g.module, nullptr);
  EXPECT_THAT(Names(g.set), ElementsAre("[S0,S1] -> [S0] (allreduce @ 1)", "[S01,R] -> [S01]",
                                        "[R,R] P0 -> [R]", "[R,R] -> [R]"));
  // The output tile [8/2] f32 is all-reduced over axis 1.
  const Strategy& s = g.set.strategies[0];
  EXPECT_THAT(s.collectives, ElementsAre(StrategyCollective{CollectiveKind::kAllReduce, {1}, 16}));
  EXPECT_DOUBLE_EQ(s.communication_seconds,
                   env.pricer().StepSeconds({CollectiveKind::kAllReduce, {1}, 16}));
  // A partial input is needed summed: the edge pays it.
  EXPECT_EQ(ToString(g.set.strategies[2].operands[0][0]), "[R,R]");
}

TEST(ReduceStrategiesTest, MaxNeverLeavesPartialResults) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(std::string(kSumRows) + "max", ReduceStrategies, env);
  ASSERT_NE(g.module, nullptr);
  EXPECT_EQ(g.set.strategies[0].name, "[S0,S1] -> [S0] (allreduce @ 1)");
  EXPECT_EQ(ToString(g.set.strategies[2].operands[0][0]), "[R,R]");
  for (const Strategy& s : g.set.strategies) EXPECT_THAT(s.output[0].partial_axes, IsEmpty());
}

TEST(ReduceStrategiesTest, VariadicOutputsShareTheSpec) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(R"(  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  zero = f32[] constant(0)
  ROOT r = (f32[16], f32[16]) reduce(x, y, zero, zero), dimensions={0}, to_apply=add2)",
                         ReduceStrategies, env);
  ASSERT_NE(g.module, nullptr);
  const Strategy& s = g.set.strategies[0];  // [S0,S1]: dimension 0 summed over axis 0
  EXPECT_EQ(s.name, "[S0,S1] -> [S1] P0 (partial @ 0)");
  ASSERT_EQ(s.output.size(), 2u);
  EXPECT_EQ(s.output[0], s.output[1]);
  EXPECT_EQ(s.operands[1][0], s.operands[0][0]);
  EXPECT_EQ(s.memory_bytes, 2 * 4 * 4);
}

TEST(ReduceStrategiesTest, ReduceWindowReplicatesWindowedDimensions) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(R"(  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[8,16] reduce-window(x, zero), window={size=1x3 pad=0_0x1_1}, to_apply=max)",
                         ReduceWindowStrategies, env);
  ASSERT_NE(g.module, nullptr);
  EXPECT_THAT(Names(g.set), ElementsAre("[S0,S1] -> [S0,R]", "[S01,R] -> [S01,R]",
                                        "[R,R] P0 -> [R,R]", "[R,R] -> [R,R]"));
  EXPECT_DOUBLE_EQ(g.set.strategies[0].compute_seconds, g.full_seconds / 2);
}

TEST(ReduceStrategiesTest, SelectAndScatterSplitsTheSourceAlike) {
  testing::MeshEnv env({2, 4});
  Generated g = Generate(R"(  x = f32[8,16] parameter(0)
  s = f32[8,8] parameter(1)
  zero = f32[] constant(0)
  ROOT r = f32[8,16] select-and-scatter(x, s, zero), window={size=1x2 stride=1x2}, select=ge,
      scatter=add)",
                         SelectAndScatterStrategies, env);
  ASSERT_NE(g.module, nullptr);
  const Strategy& first = g.set.strategies[0];
  EXPECT_EQ(ToString(first.output[0]), "[S0,R]");
  EXPECT_EQ(ToString(first.operands[1][0]), "[S0,R]");
  EXPECT_EQ(first.operands[2][0].rank(), 0);
  // The selection compares values: a partial input is summed first.
  EXPECT_EQ(ToString(g.set.strategies[2].operands[0][0]), "[R,R]");
}

TEST(ReduceStrategiesTest, OtherOpcodesAreUnimplemented) {
  testing::MeshEnv env({4});
  auto module = testing::ParseVerified(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT s = f32[4] add(a, a)
})");
  ASSERT_NE(module, nullptr);
  const ir::Instruction& add = testing::Named(*module, "s");
  EXPECT_THAT(ReduceStrategies(add, env.ctx()).status().message(), HasSubstr("%s (add)"));
  EXPECT_EQ(ReduceWindowStrategies(add, env.ctx()).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(SelectAndScatterStrategies(add, env.ctx()).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace alpa::sharding
