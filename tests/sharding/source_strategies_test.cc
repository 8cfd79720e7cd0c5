#include "sharding/source_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::string_view kSources = R"(HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  odd = f32[6] parameter(1)
  t = (f32[8], token[]) parameter(2)
  c = f32[2,2] constant({{1,2},{3,4}})
  i = s32[6,8] iota(), iota_dimension=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  rng = f32[8,16] rng(lo, hi), distribution=rng_uniform
  state = u64[2] constant({1, 2})
  bits = (u64[2], u32[8]) rng-bit-generator(state), algorithm=rng_default
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT out = (f32[8,16], f32[6]) tuple(p, odd)
})";

struct Env {
  explicit Env(std::vector<int64_t> mesh) : env(std::move(mesh)) {}
  testing::MeshEnv env;
  std::unique_ptr<ir::Module> module = testing::ParseVerified(kSources);

  StrategySet Of(std::string_view name) {
    const ir::Instruction& instruction = testing::Named(*module, name);
    Result<StrategySet> set = SourceStrategies(instruction, env.ctx());
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    if (!set.ok()) return {};
    testing::ExpectWellFormed(*set, instruction, env.mesh_shape());
    EXPECT_EQ(set->follows_operand, -1);
    return *set;
  }
};

std::vector<std::string> Names(const StrategySet& set) {
  std::vector<std::string> names;
  for (const Strategy& s : set.strategies) names.push_back(s.name);
  return names;
}

TEST(SourceStrategiesTest, ParametersTakeEverySplitThenReplicated) {
  Env e({2, 4});
  ASSERT_NE(e.module, nullptr);
  const StrategySet set = e.Of("p");
  EXPECT_THAT(Names(set), ElementsAre("[S01,R]", "[S0,S1]", "[S0,R]", "[S1,S0]", "[R,S01]",
                                      "[R,S0]", "[S1,R]", "[R,S1]", "[R,R]"));
  EXPECT_EQ(set.strategies[1].memory_bytes, 4 * 4 * 4);  // [8/2, 16/4] f32
  EXPECT_EQ(set.strategies.back().memory_bytes, 8 * 16 * 4);
  // Streaming the tile in: its bytes at the memory bandwidth, so splits are cheaper than R.
  const double stream_rate = e.env.ctx().device.memory_bandwidth * e.env.ctx().efficiency.memory;
  for (const Strategy& s : set.strategies) {
    EXPECT_DOUBLE_EQ(s.compute_seconds, static_cast<double>(s.memory_bytes) / stream_rate);
    EXPECT_THAT(s.operands, IsEmpty());
  }
  // 6 elements divide into 2 tiles (axis 0), not into 4 or 8.
  EXPECT_THAT(Names(e.Of("odd")), ElementsAre("[S0]", "[R]"));
  // A tuple parameter is replicated leaf by leaf.
  const StrategySet tuple = e.Of("t");
  ASSERT_EQ(tuple.strategies.size(), 1u);
  EXPECT_EQ(tuple.strategies[0].name, "R");
  EXPECT_EQ(tuple.strategies[0].output.size(), 2u);
}

TEST(SourceStrategiesTest, ConstantsAndDeviceIdsAreReplicated) {
  Env e({2, 4});
  ASSERT_NE(e.module, nullptr);
  EXPECT_THAT(Names(e.Of("c")), ElementsAre("[R,R]"));
  EXPECT_THAT(Names(e.Of("pid")), ElementsAre("[]"));
  EXPECT_THAT(Names(e.Of("rid")), ElementsAre("[]"));
  const StrategySet bits = e.Of("bits");
  ASSERT_EQ(bits.strategies.size(), 1u);
  EXPECT_EQ(bits.strategies[0].output.size(), 2u);
  EXPECT_TRUE(bits.strategies[0].operands[0][0].IsFullyReplicated());
}

// Alpa lets an iota's 6 rows go to 4 tiles of 2 (the last one empty), which our partitioner
// cannot lower (a plan gpt-tiny on 3 devices chose, and failed to run): its columns split alone.
TEST(SourceStrategiesTest, IotaSplitsOnlyWhereItsTilesDivide) {
  Env e({4});
  ASSERT_NE(e.module, nullptr);
  const StrategySet set = e.Of("i");
  EXPECT_THAT(Names(set), ElementsAre("[R,S0]", "[R,R]"));
  EXPECT_EQ(set.strategies[0].memory_bytes, 6 * 2 * 4);
  const double full = *InstructionSeconds(testing::Named(*e.module, "i"), e.env.ctx());
  EXPECT_GT(full, 0);
  EXPECT_DOUBLE_EQ(set.strategies[0].compute_seconds, full / 4);
  EXPECT_DOUBLE_EQ(set.strategies.back().compute_seconds, full);
}

// A split rng would draw numbers that are not the unsplit op's tile: replicated only.
TEST(SourceStrategiesTest, RngIsReplicated) {
  Env e({4});
  ASSERT_NE(e.module, nullptr);
  const StrategySet set = e.Of("rng");
  EXPECT_THAT(Names(set), ElementsAre("[R,R]"));
  for (const Strategy& s : set.strategies) {
    ASSERT_EQ(s.operands.size(), 2u);
    EXPECT_EQ(s.operands[0][0].rank(), 0);
  }
}

TEST(SourceStrategiesTest, OtherOpcodesAreUnimplemented) {
  Env e({4});
  ASSERT_NE(e.module, nullptr);
  Result<StrategySet> set = SourceStrategies(testing::Named(*e.module, "out"), e.env.ctx());
  EXPECT_EQ(set.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(set.status().message(), HasSubstr("%out (tuple)"));
}

}  // namespace
}  // namespace alpa::sharding
