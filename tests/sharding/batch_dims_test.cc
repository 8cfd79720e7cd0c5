#include "sharding/batch_dims.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/sharding/strategy_test_util.h"

namespace alpa::sharding {
namespace {

using testing::Named;
using testing::ParseVerified;

// The batch dimension of `name`, or -1.
int64_t BatchDimOf(const BatchDims& dims, const ir::Module& module, std::string_view name) {
  auto it = dims.find(&Named(module, name));
  return it == dims.end() ? -1 : it->second;
}

// One dense layer forward and backward, on a batch of 8 and hidden 16 and 32.
constexpr std::string_view kDense = R"(HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  b = f32[32] parameter(2)
  y = f32[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,32] broadcast(b), dimensions={1}
  z = f32[8,32] add(y, bb)
  t = f32[32,8] transpose(z), dimensions={1,0}
  r = f32[4,2,32] reshape(z)
  zero = f32[] constant(0)
  sum = f32[8] reduce(z, zero), dimensions={1}, to_apply=add_f32
  dw = f32[16,32] dot(x, z), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  db = f32[32] reduce(z, zero), dimensions={0}, to_apply=add_f32
  ROOT out = (f32[32,8], f32[4,2,32], f32[8], f32[16,32], f32[32]) tuple(t, r, sum, dw, db)
}
add_f32 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
})";

TEST(BatchDimsTest, FollowsTheBatchThroughTheLayerAndEndsAtContractions) {
  auto module = ParseVerified(kDense);
  ASSERT_NE(module, nullptr);
  const BatchDims dims = AnalyzeBatchDims(*module->entry(), {"x"});
  EXPECT_EQ(BatchDimOf(dims, *module, "x"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "y"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "z"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "t"), 1);    // transposed
  EXPECT_EQ(BatchDimOf(dims, *module, "r"), 0);    // 8 rows split into 4x2: the major factor
  EXPECT_EQ(BatchDimOf(dims, *module, "sum"), 0);  // the batch is kept
  // Backward into the bias broadcast (it joins the batch in z), never into parameters.
  EXPECT_EQ(BatchDimOf(dims, *module, "bb"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "w"), -1);
  EXPECT_EQ(BatchDimOf(dims, *module, "b"), -1);
  // Gradients contract or reduce the batch away.
  EXPECT_EQ(BatchDimOf(dims, *module, "dw"), -1);
  EXPECT_EQ(BatchDimOf(dims, *module, "db"), -1);
  EXPECT_EQ(BatchDimOf(dims, *module, "out"), -1);  // a tuple has none
}

TEST(BatchDimsTest, WithoutBatchParametersTheFirstContractionSeeds) {
  auto module = ParseVerified(kDense);
  ASSERT_NE(module, nullptr);
  const BatchDims dims = AnalyzeBatchDims(*module->entry(), {});
  EXPECT_EQ(BatchDimOf(dims, *module, "y"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "z"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "x"), -1);  // a parameter is not entered backward
  EXPECT_EQ(BatchDimOf(dims, *module, "dw"), -1);
}

TEST(BatchDimsTest, AttentionAndEmbeddingLookups) {
  auto module = ParseVerified(R"(HloModule m
ENTRY e {
  ids = s32[4,6] parameter(0)
  table = f32[100,8] parameter(1)
  emb = f32[4,6,8] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,8}
  heads = f32[4,6,2,4] reshape(emb)
  q = f32[4,2,6,4] transpose(heads), dimensions={0,2,1,3}
  scores = f32[4,2,6,6] dot(q, q), lhs_batch_dims={0,1}, rhs_batch_dims={0,1},
      lhs_contracting_dims={3}, rhs_contracting_dims={3}
  merged = f32[24,8] reshape(emb)
  ROOT out = (f32[4,2,6,6], f32[24,8]) tuple(scores, merged)
})");
  ASSERT_NE(module, nullptr);
  const BatchDims dims = AnalyzeBatchDims(*module->entry(), {"ids"});
  EXPECT_EQ(BatchDimOf(dims, *module, "emb"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "heads"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "q"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "scores"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "merged"), 0);  // [B*S, H]: the batch is the major factor
  EXPECT_EQ(BatchDimOf(dims, *module, "table"), -1);
}

TEST(BatchDimsTest, ConvolutionKeepsTheBatchOfItsInput) {
  auto module = ParseVerified(R"(HloModule m
ENTRY e {
  x = f32[8,3,5,5] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  ROOT y = f32[8,4,5,5] convolution(x, k), window={size=3x3 pad=1_1x1_1},
      dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  const BatchDims dims = AnalyzeBatchDims(*module->entry(), {"x"});
  EXPECT_EQ(BatchDimOf(dims, *module, "y"), 0);
  EXPECT_EQ(BatchDimOf(dims, *module, "k"), -1);
}

Strategy WithOutput(std::string name, ShardingSpec spec) {
  Strategy strategy;
  strategy.name = std::move(name);
  strategy.output = {std::move(spec)};
  return strategy;
}

TEST(BatchDimsTest, KeepBatchSplitKeepsExactlyTheForcedAxis) {
  StrategySet set;
  set.follows_operand = 0;
  set.strategies = {WithOutput("S0", ShardingSpec::SplitDim(2, 0, {0})),
                    WithOutput("S1", ShardingSpec::SplitDim(2, 0, {1})),
                    WithOutput("S01", ShardingSpec::SplitDim(2, 0, {0, 1})),
                    WithOutput("RS0", ShardingSpec::SplitDim(2, 1, {0})),
                    WithOutput("R", ShardingSpec::Replicated(2))};
  const StrategySet on_axis_0 = KeepBatchSplit(set, 0, 0, {2, 4});
  ASSERT_EQ(on_axis_0.strategies.size(), 1u);
  EXPECT_EQ(on_axis_0.strategies[0].name, "S0");
  EXPECT_EQ(on_axis_0.follows_operand, -1);  // the correspondence with the operand is gone

  // On a (1, op) mesh the forced axis has size 1: the batch stays whole.
  const StrategySet whole = KeepBatchSplit(set, 0, 0, {1, 8});
  ASSERT_EQ(whole.strategies.size(), 2u);
  EXPECT_EQ(whole.strategies[0].name, "RS0");
  EXPECT_EQ(whole.strategies[1].name, "R");

  // Nothing passes: the set comes back whole, still following.
  StrategySet unsplittable;
  unsplittable.follows_operand = 0;
  unsplittable.strategies = {WithOutput("S1", ShardingSpec::SplitDim(2, 0, {1}))};
  const StrategySet kept = KeepBatchSplit(unsplittable, 0, 0, {2, 4});
  EXPECT_EQ(kept.strategies.size(), 1u);
  EXPECT_EQ(kept.follows_operand, 0);
}

}  // namespace
}  // namespace alpa::sharding
