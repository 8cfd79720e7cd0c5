// Shape rules of data-movement ops (shape_inference_data_movement.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using DataMovementShapeTest = IrTest;

TEST_F(DataMovementShapeTest, Iota) {
  EXPECT_EQ(S(b_.Iota(S32({4, 3}), 1)), "s32[4,3]");
  EXPECT_EQ(b_.Iota(S32({4}), 1), nullptr);
  EXPECT_THAT(Error(), HasSubstr("iota %iota.2: iota_dimension 1 is out of range [0, 1)"));
}

TEST_F(DataMovementShapeTest, BroadcastMapsOperandDimsToOutputDims) {
  Instruction* bias = Param(F32({4}));
  EXPECT_EQ(S(b_.Broadcast(bias, {8, 4}, {1})), "f32[8,4]");
  EXPECT_EQ(S(b_.Broadcast(Param(F32({})), {0, 2}, {})), "f32[0,2]");
  EXPECT_EQ(S(b_.Broadcast(Param(F32({2, 3})), {3, 5, 2}, {2, 0})), "f32[3,5,2]");
  EXPECT_EQ(b_.Broadcast(bias, {4, 8}, {1}), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("operand dimension 0 has size 4 but output dimension 1 has size 8"));
  Reset();
  EXPECT_EQ(b_.Broadcast(Param(F32({4})), {4, 4}, {2}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("dimensions entry 2 is out of range [0, 2)"));
}

TEST_F(DataMovementShapeTest, ReshapeKeepsElementCount) {
  Instruction* x = Param(F32({2, 3, 4}));
  EXPECT_EQ(S(b_.Reshape(x, {6, 4})), "f32[6,4]");
  EXPECT_EQ(S(b_.Reshape(Param(F32({0, 3})), {3, 0, 7})), "f32[3,0,7]");
  EXPECT_EQ(b_.Reshape(x, {5, 5}), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("cannot reshape f32[2,3,4] (24 elements) to f32[5,5] (25 elements)"));
}

TEST_F(DataMovementShapeTest, TransposePermutes) {
  Instruction* x = Param(F32({2, 3, 4}));
  EXPECT_EQ(S(b_.Transpose(x, {2, 0, 1})), "f32[4,2,3]");
  EXPECT_EQ(b_.Transpose(x, {0, 0, 1}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("transpose %transpose.2: dimensions has duplicate entry 0"));
}

TEST_F(DataMovementShapeTest, StridedSlice) {
  Instruction* x = Param(F32({10, 7}));
  // ceil((9 - 1) / 3) = 3 and ceil((7 - 0) / 2) = 4; an empty range gives 0.
  EXPECT_EQ(S(b_.Slice(x, {{1, 9, 3}, {0, 7, 2}})), "f32[3,4]");
  EXPECT_EQ(S(b_.Slice(x, {{4, 4, 1}, {0, 7, 1}})), "f32[0,7]");
  EXPECT_EQ(b_.Slice(x, {{0, 11, 1}, {0, 7, 1}}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("slice dimension 0 [0:11:1] must have 0 <= start <= limit <= 10 "
                                 "and stride >= 1"));
}

TEST_F(DataMovementShapeTest, DynamicSliceAndUpdate) {
  Instruction* x = Param(F32({8, 6}));
  Instruction* i = Param(S32({}));
  Instruction* j = Param(S32({}));
  EXPECT_EQ(S(b_.DynamicSlice(x, {i, j}, {2, 6})), "f32[2,6]");
  EXPECT_EQ(S(b_.DynamicUpdateSlice(x, Param(F32({1, 6})), {i, j})), "f32[8,6]");
  EXPECT_EQ(b_.DynamicSlice(x, {i, j}, {9, 1}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("slice size 9 of dimension 0 is out of range [0, 8]"));
  Reset();
  Instruction* y = Param(F32({8}));
  EXPECT_EQ(b_.DynamicSlice(y, {Param(F32({}))}, {1}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("index operand 1 (%parameter.6) must be an integer scalar but has "
                                 "shape f32[]"));
  Reset();
  Instruction* z = Param(F32({4}));
  EXPECT_EQ(b_.DynamicUpdateSlice(z, Param(F32({5})), {Param(S32({}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("update f32[5] does not fit in operand f32[4]"));
}

TEST_F(DataMovementShapeTest, ConcatenateSumsOneDimension) {
  Instruction* a = Param(F32({2, 3}));
  Instruction* b = Param(F32({2, 5}));
  Instruction* empty = Param(F32({2, 0}));
  EXPECT_EQ(S(b_.Concatenate({a, b, empty}, 1)), "f32[2,8]");
  EXPECT_EQ(b_.Concatenate({a, b}, 0), nullptr);
  EXPECT_THAT(
      Error(),
      HasSubstr("operand 1 f32[2,5] must match operand 0 f32[2,3] in every dimension but 0"));
}

TEST_F(DataMovementShapeTest, PadWithNegativeAndInteriorPadding) {
  Instruction* x = Param(F32({5, 3}));
  Instruction* zero = Param(F32({}));
  // dim 0: -1 + 2 + 5 + 4 * 1 = 10; dim 1: 0 + 0 + 3 + 2 * 2 = 7.
  EXPECT_EQ(S(b_.Pad(x, zero, {{-1, 2, 1}, {0, 0, 2}})), "f32[10,7]");
  // Cropping everything: -3 - 2 + 5 = 0.
  EXPECT_EQ(S(b_.Pad(x, zero, {{-3, -2, 0}, {0, 0, 0}})), "f32[0,3]");
  EXPECT_EQ(b_.Pad(x, zero, {{-4, -2, 0}, {0, 0, 0}}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("padding -4_-2_0 of dimension 0 (size 5) gives size -1"));
  Reset();
  EXPECT_EQ(b_.Pad(Param(F32({2})), Param(S32({})), {{0, 0, 0}}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("padding value s32[] must be a scalar of the operand's type f32"));
}

TEST_F(DataMovementShapeTest, Reverse) {
  Instruction* x = Param(F32({2, 3}));
  EXPECT_EQ(S(b_.Reverse(x, {0, 1})), "f32[2,3]");
  EXPECT_EQ(b_.Reverse(x, {3}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("reverse %reverse.2: dimensions entry 3 is out of range [0, 2)"));
}

TEST_F(DataMovementShapeTest, DimensionSizeQueries) {
  Instruction* x = Param(F32({2, 3}));
  Attributes attributes;
  attributes.dimensions = {1};
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kGetDimensionSize, {x}, attributes)), "s32[]");
  Instruction* set = b_.AddInstruction(Opcode::kSetDimensionSize, {x, Param(S32({}))}, attributes);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->shape().ToString(false), "f32[2,<=3]");
  attributes.dimensions = {2};
  EXPECT_EQ(b_.AddInstruction(Opcode::kGetDimensionSize, {x}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("dimensions entry 2 is out of range [0, 2)"));
}

TEST_F(DataMovementShapeTest, SetDimensionSizeNeedsAnIntegerScalarSizeAndOneDimension) {
  Instruction* x = Param(F32({2, 3}));
  Attributes attributes;
  attributes.dimensions = {0};
  EXPECT_EQ(b_.AddInstruction(Opcode::kSetDimensionSize, {x, Param(F32({}))}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("set-dimension-size %set-dimension-size.1: index operand 1 "
                                 "(%parameter.2) must be an integer scalar but has shape f32[]"));
  Reset();
  attributes.dimensions = {0, 1};
  EXPECT_EQ(b_.AddInstruction(Opcode::kSetDimensionSize, {Param(F32({2, 3})), Param(S32({}))},
                              attributes),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("dimensions must have exactly one entry but has 2"));
}

}  // namespace
}  // namespace alpa::ir
