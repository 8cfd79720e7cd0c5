// Shape rules of reduce, reduce-window, select-and-scatter, sort and topk
// (shape_inference_reduce.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using ReduceShapeTest = IrTest;

// (f32, s32, f32, s32) -> (f32, s32): an argmax-style reducer for variadic reduce.
Computation* PairReducer(ModuleBuilder& mb) {
  ComputationBuilder c = mb.NewComputation("pair");
  Instruction* v0 = c.Parameter(0, F32({}));
  Instruction* i0 = c.Parameter(1, S32({}));
  Instruction* v1 = c.Parameter(2, F32({}));
  Instruction* i1 = c.Parameter(3, S32({}));
  Instruction* take = c.Compare(v0, v1, ComparisonDirection::kGe);
  Result<Computation*> built = c.Build(c.Tuple({c.Select(take, v0, v1), c.Select(take, i0, i1)}));
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  return built.ok() ? *built : nullptr;
}

TEST_F(ReduceShapeTest, ReduceRemovesDimensions) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Instruction* x = Param(F32({2, 3, 4}));
  Instruction* zero = b_.ConstantScalar(DType::kF32, 0);
  EXPECT_EQ(S(b_.Reduce(x, zero, {0, 2}, add)), "f32[3]");
  EXPECT_EQ(S(b_.Reduce(x, zero, {0, 1, 2}, add)), "f32[]");
  EXPECT_EQ(S(b_.Reduce(x, zero, {}, add)), "f32[2,3,4]");
  // Reducing an empty dimension is fine (the result is the init value); the others survive.
  EXPECT_EQ(S(b_.Reduce(Param(F32({0, 3})), zero, {0}, add)), "f32[3]");
  EXPECT_EQ(S(b_.Reduce(Param(F32({0, 3})), zero, {1}, add)), "f32[0]");
  EXPECT_EQ(b_.Reduce(x, zero, {3}, add), nullptr);
  EXPECT_THAT(Error(), HasSubstr("reduce %reduce.6: dimensions entry 3 is out of range [0, 3)"));
}

TEST_F(ReduceShapeTest, VariadicReduceGivesATuple) {
  Computation* pair = PairReducer(mb_);
  Instruction* values = Param(F32({5, 7}));
  Instruction* indices = Param(S32({5, 7}));
  Instruction* v0 = b_.ConstantScalar(DType::kF32, -1);
  Instruction* i0 = b_.ConstantScalar(DType::kS32, 0);
  EXPECT_EQ(S(b_.Reduce({values, indices}, {v0, i0}, {1}, pair)), "(f32[5], s32[5])");
  EXPECT_EQ(b_.Reduce({values, indices}, {i0, v0}, {1}, pair), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("reducer %pair has signature (f32[], s32[], f32[], s32[])->(f32[], "
                        "s32[]) but must be (s32[], f32[], f32[], s32[])->(s32[], f32[])"));
}

TEST_F(ReduceShapeTest, ReducerMustBeScalar) {
  Computation* vector_add = Sub("vector_add", [](ComputationBuilder& c) {
    return c.Add(c.Parameter(0, F32({2})), c.Parameter(1, F32({2})));
  });
  EXPECT_EQ(b_.Reduce(Param(F32({2, 2})), b_.ConstantScalar(DType::kF32, 0), {0}, vector_add),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("reducer %vector_add has signature (f32[2], f32[2])->f32[2] but "
                                 "must be (f32[], f32[])->f32[]"));
  Reset();
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  EXPECT_EQ(b_.Reduce(Param(F32({2})), Param(F32({1})), {0}, add), nullptr);
  EXPECT_THAT(Error(), HasSubstr("init value 0 f32[1] must be a scalar"));
}

TEST_F(ReduceShapeTest, ReduceWindowPoolsEachDimension) {
  Computation* max = mb_.ScalarReducer(Opcode::kMaximum, DType::kF32);
  Instruction* x = Param(F32({4, 9}));
  Instruction* init = b_.ConstantScalar(DType::kF32, 0);
  // dim 0: size 2 stride 2 -> 2; dim 1: size 3 stride 2 pad 1_1 -> (11 - 3) / 2 + 1 = 5.
  std::vector<WindowDim> window = {{2, 2, 0, 0, 1, 1, false}, {3, 2, 1, 1, 1, 1, false}};
  EXPECT_EQ(S(b_.ReduceWindow({x}, {init}, window, max)), "f32[2,5]");
  EXPECT_EQ(S(b_.ReduceWindow({x, x}, {init, init}, window, nullptr)),
            "error: computation %main: "
            "called computation 0 of reduce-window is null");
}

TEST_F(ReduceShapeTest, VariadicReduceWindow) {
  Computation* pair = PairReducer(mb_);
  Instruction* v = Param(F32({6}));
  Instruction* i = Param(S32({6}));
  Instruction* v0 = b_.ConstantScalar(DType::kF32, 0);
  Instruction* i0 = b_.ConstantScalar(DType::kS32, 0);
  EXPECT_EQ(S(b_.ReduceWindow({v, i}, {v0, i0}, {{3, 3, 0, 0, 1, 1, false}}, pair)),
            "(f32[2], s32[2])");
  EXPECT_EQ(b_.ReduceWindow({v, i}, {v0, i0}, {}, pair), nullptr);
  EXPECT_THAT(Error(), HasSubstr("window has 0 dimension(s) but must have 1"));
}

TEST_F(ReduceShapeTest, SelectAndScatter) {
  Computation* ge = Sub("ge", [](ComputationBuilder& c) {
    return c.Compare(c.Parameter(0, F32({})), c.Parameter(1, F32({})), ComparisonDirection::kGe);
  });
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Attributes attributes;
  attributes.window = {{2, 2, 0, 0, 1, 1, false}, {2, 2, 0, 0, 1, 1, false}};
  Instruction* operand = Param(F32({4, 6}));
  Instruction* init = b_.ConstantScalar(DType::kF32, 0);
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kSelectAndScatter, {operand, Param(F32({2, 3})), init},
                                attributes, {ge, add})),
            "f32[4,6]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kSelectAndScatter, {operand, Param(F32({2, 2})), init},
                              attributes, {ge, add}),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("source f32[2,2] must have shape f32[2,3] (the operand f32[4,6] "
                                 "windowed)"));
}

TEST_F(ReduceShapeTest, SortIsVariadic) {
  Computation* less = Sub("less", [](ComputationBuilder& c) {
    c.Parameter(2, S32({}));
    c.Parameter(3, S32({}));
    return c.Compare(c.Parameter(0, F32({})), c.Parameter(1, F32({})), ComparisonDirection::kLt);
  });
  Instruction* keys = Param(F32({3, 8}));
  Instruction* values = Param(S32({3, 8}));
  EXPECT_EQ(S(b_.Sort({keys, values}, 1, less)), "(f32[3,8], s32[3,8])");
  EXPECT_EQ(b_.Sort({keys}, 1, less), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("comparator %less has signature (f32[], f32[], s32[], s32[])->pred[] "
                        "but must be (f32[], f32[])->pred[]"));
}

TEST_F(ReduceShapeTest, TopK) {
  Attributes attributes;
  attributes.k = 3;
  Instruction* x = Param(F32({2, 10}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kTopK, {x}, attributes)), "(f32[2,3], s32[2,3])");
  attributes.k = 11;
  EXPECT_EQ(b_.AddInstruction(Opcode::kTopK, {x}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("k=11 must lie in [0, last dimension] of operand f32[2,10]"));
}

}  // namespace
}  // namespace alpa::ir
