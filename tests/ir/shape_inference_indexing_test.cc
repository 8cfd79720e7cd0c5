// Shape rules of gather and scatter (shape_inference_indexing.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using IndexingShapeTest = IrTest;

GatherDimensionNumbers GatherDims(std::vector<int64_t> offset, std::vector<int64_t> collapsed,
                                  std::vector<int64_t> start_index_map, int64_t index_vector_dim,
                                  std::vector<int64_t> operand_batching = {},
                                  std::vector<int64_t> indices_batching = {}) {
  return GatherDimensionNumbers{std::move(offset),           std::move(collapsed),
                                std::move(start_index_map),  index_vector_dim,
                                std::move(operand_batching), std::move(indices_batching)};
}

ScatterDimensionNumbers ScatterDims(std::vector<int64_t> update_window,
                                    std::vector<int64_t> inserted, std::vector<int64_t> to_operand,
                                    int64_t index_vector_dim) {
  return ScatterDimensionNumbers{std::move(update_window),
                                 std::move(inserted),
                                 std::move(to_operand),
                                 index_vector_dim,
                                 {},
                                 {}};
}

TEST_F(IndexingShapeTest, EmbeddingGatherWithImplicitIndexVector) {
  // index_vector_dim == rank(indices): s32[8,16] reads as s32[8,16,1].
  Instruction* table = Param(F32({1000, 64}));
  Instruction* ids = Param(S32({8, 16}));
  EXPECT_EQ(S(b_.Gather(table, ids, GatherDims({2}, {0}, {0}, 2), {1, 64})), "f32[8,16,64]");
  // No ids: the batch dims are empty and so is the result.
  EXPECT_EQ(S(b_.Gather(table, Param(S32({0})), GatherDims({1}, {0}, {0}, 1), {1, 64})),
            "f32[0,64]");
}

TEST_F(IndexingShapeTest, GatherWithIndexVectorDimInTheMiddle) {
  // Index vectors of size 2 along dim 1; batch dims (4, 5); offsets (3, 2) at output dims 1, 3.
  Instruction* operand = Param(F32({10, 9, 8}));
  Instruction* indices = Param(S32({4, 2, 5}));
  EXPECT_EQ(S(b_.Gather(operand, indices, GatherDims({1, 3}, {0}, {0, 2}, 1), {1, 3, 2})),
            "f32[4,3,5,2]");
  EXPECT_EQ(b_.Gather(operand, indices, GatherDims({1, 3}, {0}, {0}, 1), {1, 3, 2}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("gather %gather.2: start_index_map has 1 entries but the index "
                                 "vector has size 2"));
}

TEST_F(IndexingShapeTest, GatherWithBatchingDims) {
  // Operand batch dim 0 pairs with indices dim 0 (both 3).
  Instruction* operand = Param(F32({3, 10, 4}));
  Instruction* indices = Param(S32({3, 5, 1}));
  EXPECT_EQ(S(b_.Gather(operand, indices, GatherDims({2}, {1}, {1}, 2, {0}, {0}), {1, 1, 4})),
            "f32[3,5,4]");
  Instruction* wrong = Param(S32({2, 5, 1}));
  EXPECT_EQ(b_.Gather(operand, wrong, GatherDims({2}, {1}, {1}, 2, {0}, {0}), {1, 1, 4}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("indices batching dim 0 has size 2 but operand batching dim 0 has "
                                 "size 3"));
}

TEST_F(IndexingShapeTest, GatherSliceSizeRules) {
  Instruction* table = Param(F32({1000, 64}));
  Instruction* ids = Param(S32({8}));
  EXPECT_EQ(b_.Gather(table, ids, GatherDims({1}, {0}, {0}, 1), {2, 64}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("collapsed or batching operand dimension 0 must have slice size "
                                 "<= 1 but has 2"));
  Reset();
  EXPECT_EQ(b_.Gather(Param(F32({10})), Param(S32({3})), GatherDims({1}, {}, {0}, 1), {11}),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("slice size 11 of operand dimension 0 is out of range [0, 10]"));
  Reset();
  EXPECT_EQ(b_.Gather(Param(F32({10})), Param(S32({3})), GatherDims({1}, {}, {0}, 2), {1}),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("index_vector_dim 2 is out of range [0, 1]"));
}

TEST_F(IndexingShapeTest, EmbeddingGradientScatter) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Instruction* table = Param(F32({1000, 64}));
  Instruction* ids = Param(S32({8, 16}));
  Instruction* grads = Param(F32({8, 16, 64}));
  EXPECT_EQ(S(b_.Scatter({table}, ids, {grads}, ScatterDims({2}, {0}, {0}, 2), add)),
            "f32[1000,64]");
  Instruction* short_grads = Param(F32({8, 15, 64}));
  EXPECT_EQ(b_.Scatter({table}, ids, {short_grads}, ScatterDims({2}, {0}, {0}, 2), add), nullptr);
  EXPECT_THAT(Error(), HasSubstr("update scatter dimension 1 has size 15 but the indices' batch "
                                 "dimensions are {8,16}"));
}

TEST_F(IndexingShapeTest, ScatterWithIndexVectorDimInTheMiddleAndVariadic) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Instruction* operand = Param(F32({10, 9, 8}));
  Instruction* indices = Param(S32({4, 2, 5}));
  Instruction* updates = Param(F32({4, 3, 5, 2}));
  EXPECT_EQ(S(b_.Scatter({operand}, indices, {updates}, ScatterDims({1, 3}, {0}, {0, 2}, 1), add)),
            "f32[10,9,8]");
  Instruction* big = Param(F32({4, 10, 5, 2}));
  EXPECT_EQ(b_.Scatter({operand}, indices, {big}, ScatterDims({1, 3}, {0}, {0, 2}, 1), add),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("update window dimension 1 has size 10 but operand dimension 1 "
                                 "has only 9"));
}

TEST_F(IndexingShapeTest, VariadicScatterGivesATupleAndChecksItsReducer) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Computation* add2 = Sub("add2", [](ComputationBuilder& c) {
    Instruction* a0 = c.Parameter(0, F32({}));
    Instruction* a1 = c.Parameter(1, S32({}));
    Instruction* b0 = c.Parameter(2, F32({}));
    Instruction* b1 = c.Parameter(3, S32({}));
    return c.Tuple({c.Add(a0, b0), c.Add(a1, b1)});
  });
  Instruction* x = Param(F32({6}));
  Instruction* y = Param(S32({6}));
  Instruction* indices = Param(S32({2}));
  Instruction* ux = Param(F32({2}));
  Instruction* uy = Param(S32({2}));
  EXPECT_EQ(S(b_.Scatter({x, y}, indices, {ux, uy}, ScatterDims({}, {0}, {0}, 1), add2)),
            "(f32[6], s32[6])");
  EXPECT_EQ(b_.Scatter({x, y}, indices, {ux, uy}, ScatterDims({}, {0}, {0}, 1), add), nullptr);
  EXPECT_THAT(Error(), HasSubstr("reducer %add.f32 has signature (f32[], f32[])->f32[] but must be "
                                 "(f32[], s32[], f32[], s32[])->(f32[], s32[])"));
}

}  // namespace
}  // namespace alpa::ir
