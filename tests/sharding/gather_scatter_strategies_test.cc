#include "sharding/gather_scatter_strategies.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/sharding/follow_test_util.h"

namespace alpa::sharding {
namespace {

using testing::ExpectValidSpecs;
using testing::FollowTestEnv;
using testing::Spec;

constexpr std::string_view kIndexing = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  table = f32[64,32] parameter(0)
  ids = s32[8,16] parameter(1)
  grad = f32[8,32] parameter(2)
  flat_ids = s32[8] parameter(3)
  emb = f32[8,16,32] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}
  rows = f32[8,16,8] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,8}
  acc = f32[64,32] scatter(table, flat_ids, grad), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  put = f32[64,32] scatter(table, flat_ids, grad), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
  ROOT t = (f32[8,16,32]) tuple(emb)
}
)";

class GatherScatterStrategiesTest : public ::testing::Test {
 protected:
  GatherScatterStrategiesTest() { env.Parse(kIndexing); }

  StrategySet Run(std::string_view name) {
    Result<StrategySet> set = GatherScatterStrategies(env.Get(name), env.ctx);
    EXPECT_TRUE(set.ok()) << set.status().message();
    if (!set.ok()) return {};
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    return std::move(set).value();
  }

  static const Strategy* Find(const StrategySet& set, const std::string& name) {
    for (const Strategy& strategy : set.strategies) {
      if (strategy.name == name) return &strategy;
    }
    ADD_FAILURE() << "no strategy " << name;
    return nullptr;
  }

  FollowTestEnv env{{2, 4}};
};

TEST_F(GatherScatterStrategiesTest, EmbeddingLookup) {
  const StrategySet set = Run("emb");
  EXPECT_EQ(set.follows_operand, -1);
  // Each axis: batch 0, batch 1, vocab, hidden or nothing: 5 x 5, the all-replicated one last.
  ASSERT_EQ(set.strategies.size(), 25u);
  EXPECT_EQ(set.strategies.back().name, "[R,R,R] = [R,R] x [R,R]");

  // Data parallel x hidden split.
  const Strategy* hidden = Find(set, "[S0,R,S1] = [R,S1] x [S0,R]");
  ASSERT_NE(hidden, nullptr);
  EXPECT_TRUE(hidden->collectives.empty());

  // Data parallel x vocab parallel: the rows a device holds, a partial sum over the vocab axis.
  const Strategy* vocab = Find(set, "[S0,R,R] P1 = [S1,R] x [S0,R]");
  ASSERT_NE(vocab, nullptr);
  EXPECT_EQ(vocab->output, LeafSpecs{Spec({{0}, {}, {}}, {1})});
  EXPECT_EQ(vocab->operands[0], LeafSpecs{Spec({{1}, {}})});
  EXPECT_EQ(vocab->operands[1], LeafSpecs{Spec({{0}, {}})});
  EXPECT_TRUE(vocab->collectives.empty()) << "the edge pays the all-reduce";
  EXPECT_EQ(vocab->memory_bytes, 4 * 16 * 32 * 4);
}

TEST_F(GatherScatterStrategiesTest, VocabParallelAllReducesItselfWithoutPartialOutputs) {
  env.ctx.options.allow_partial_outputs = false;
  const StrategySet set = Run("emb");
  const Strategy* vocab = Find(set, "[S0,R,R] = [S1,R] x [S0,R] (allreduce @ 1)");
  ASSERT_NE(vocab, nullptr);
  ASSERT_EQ(vocab->collectives.size(), 1u);
  EXPECT_EQ(vocab->collectives[0].kind, cost::CollectiveKind::kAllReduce);
  EXPECT_EQ(vocab->collectives[0].axes, std::vector<int64_t>{1});
  EXPECT_EQ(vocab->collectives[0].bytes, 4 * 16 * 32 * 4);
  EXPECT_GT(vocab->communication_seconds, 0);
  for (const Strategy& strategy : set.strategies) {
    EXPECT_TRUE(strategy.output[0].partial_axes.empty()) << strategy.name;
  }
}

TEST_F(GatherScatterStrategiesTest, APartialWindowIsNotSplit) {
  // slice_sizes={1,8} of 32 columns: the hidden dim is no role.
  for (const Strategy& strategy : Run("rows").strategies) {
    EXPECT_TRUE(strategy.operands[0][0].dim_axes[1].empty()) << strategy.name;
  }
}

TEST_F(GatherScatterStrategiesTest, ScatterAddIntoAVocabSplitTable) {
  const StrategySet set = Run("acc");
  // Vocab split: each device applies the updates landing in its rows.
  const Strategy* vocab = Find(set, "[S1,R] = [S1,R] x [R] x [R,R]");
  ASSERT_NE(vocab, nullptr);
  // Batch split of an add: the table is needed partial, the result is partial.
  const Strategy* batch = Find(set, "[S1,R] P0 = [S1,R] P0 x [S0] x [S0,R]");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->output, LeafSpecs{Spec({{1}, {}}, {0})});
  // Hidden split: everything split on the window dim.
  ASSERT_NE(Find(set, "[R,S1] = [R,S1] x [R] x [R,S1]"), nullptr);
}

TEST_F(GatherScatterStrategiesTest, ScatterOfAnotherCombinerDoesNotSplitTheBatch) {
  const StrategySet set = Run("put");
  ASSERT_NE(Find(set, "[S1,R] = [S1,R] x [R] x [R,R]"), nullptr);
  for (const Strategy& strategy : set.strategies) {
    EXPECT_TRUE(strategy.output[0].partial_axes.empty()) << strategy.name;
    EXPECT_TRUE(strategy.operands[1][0].dim_axes[0].empty()) << strategy.name;
  }
}

TEST(GatherScatterStrategies, ThreeDimensionalMesh) {
  FollowTestEnv env({2, 2, 2});
  env.Parse(kIndexing);
  for (std::string_view name : {"emb", "acc"}) {
    Result<StrategySet> set = GatherScatterStrategies(env.Get(name), env.ctx);
    ASSERT_TRUE(set.ok()) << set.status().message();
    ExpectValidSpecs(*set, env.Get(name), env.ctx.mesh_shape());
    EXPECT_EQ(set->strategies.size(), name == "emb" ? 125u : 64u) << name;
  }
}

}  // namespace
}  // namespace alpa::sharding
