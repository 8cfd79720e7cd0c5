// Shape rules of elementwise ops (shape_inference_elementwise.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/shape_inference.h"
#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using ElementwiseShapeTest = IrTest;

TEST_F(ElementwiseShapeTest, UnaryKeepsShapeAndComplexPartsAreReal) {
  Instruction* x = Param(DType::kF32, {2, 0, 3});
  EXPECT_EQ(S(b_.Exp(x)), "f32[2,0,3]");
  EXPECT_EQ(S(b_.Unary(Opcode::kIsFinite, x)), "pred[2,0,3]");
  Instruction* c = Param(Shape::Array(DType::kC128, {4}));
  EXPECT_EQ(S(b_.Abs(c)), "f64[4]");
  EXPECT_EQ(S(b_.Unary(Opcode::kReal, c)), "f64[4]");
  EXPECT_EQ(S(b_.Unary(Opcode::kImag, c)), "f64[4]");
  EXPECT_EQ(S(b_.Abs(x)), "f32[2,0,3]");
  Instruction* i = Param(DType::kS32, {5});
  EXPECT_EQ(S(b_.Unary(Opcode::kPopulationCount, i)), "s32[5]");
  EXPECT_EQ(S(b_.Unary(Opcode::kNot, i)), "s32[5]");
}

TEST_F(ElementwiseShapeTest, UnaryRejectsWrongElementType) {
  Instruction* i = Param(DType::kS32, {5});
  EXPECT_EQ(b_.Exp(i), nullptr);
  EXPECT_THAT(Error(), HasSubstr("exponential %exponential.1: operand must have a floating-point "
                                 "or complex element type but has shape s32[5]"));
  Reset();
  EXPECT_EQ(b_.Unary(Opcode::kIsFinite, Param(DType::kS32, {})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand must have a floating-point element type"));
}

TEST_F(ElementwiseShapeTest, BinaryNeedsEqualDimsAndTypes) {
  Instruction* a = Param(DType::kF32, {2, 3});
  Instruction* b = Param(DType::kF32, {2, 3});
  EXPECT_EQ(S(b_.Add(a, b)), "f32[2,3]");
  EXPECT_EQ(S(b_.Binary(Opcode::kComplex, a, b)), "c64[2,3]");
  EXPECT_EQ(S(b_.Compare(a, b, ComparisonDirection::kLt)), "pred[2,3]");
  Instruction* c = Param(DType::kF32, {3, 2});
  EXPECT_EQ(b_.Multiply(a, c), nullptr);
  EXPECT_THAT(Error(), HasSubstr("multiply %multiply.1: operands must have equal dimensions but "
                                 "have shapes f32[2,3] and f32[3,2]"));
  Reset();
  EXPECT_EQ(b_.Add(Param(DType::kF32, {2}), Param(DType::kBF16, {2})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operands must have equal element types but have shapes f32[2] "
                                 "and bf16[2]"));
}

TEST_F(ElementwiseShapeTest, ShiftsTakeTwoIntegerTypesAndKeepTheLhsType) {
  Instruction* a = Param(DType::kU32, {4});
  Instruction* n = Param(DType::kU8, {4});
  EXPECT_EQ(S(b_.Binary(Opcode::kShiftLeft, a, n)), "u32[4]");
  EXPECT_EQ(b_.Binary(Opcode::kShiftRightLogical, Param(DType::kF32, {4}), n), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operands must be integers but have shapes f32[4] and u8[4]"));
}

TEST_F(ElementwiseShapeTest, LogicalOpsNeedPredOrIntegers) {
  Instruction* p = Param(DType::kPred, {3});
  EXPECT_EQ(S(b_.Binary(Opcode::kAnd, p, p)), "pred[3]");
  Instruction* f = Param(DType::kF32, {3});
  EXPECT_EQ(b_.Binary(Opcode::kXor, f, f), nullptr);
  EXPECT_THAT(Error(), HasSubstr("xor %xor.1: operands must be pred or integers"));
}

TEST_F(ElementwiseShapeTest, SelectAcceptsScalarOrSameDimsPredicate) {
  Instruction* on_true = Param(DType::kF32, {2, 2});
  Instruction* on_false = Param(DType::kF32, {2, 2});
  EXPECT_EQ(S(b_.Select(Param(DType::kPred, {}), on_true, on_false)), "f32[2,2]");
  EXPECT_EQ(S(b_.Select(Param(DType::kPred, {2, 2}), on_true, on_false)), "f32[2,2]");
  EXPECT_EQ(b_.Select(Param(DType::kPred, {2}), on_true, on_false), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("predicate pred[2] must be a scalar or have the dimensions of f32[2,2]"));
  Reset();
  EXPECT_EQ(b_.Select(Param(DType::kPred, {}), Param(F32({2})), Param(S32({2}))), nullptr);
  EXPECT_THAT(Error(), HasSubstr("on_true f32[2] and on_false s32[2] must have the same shape"));
}

TEST_F(ElementwiseShapeTest, ClampBoundsMayBeScalars) {
  Instruction* x = Param(F32({3}));
  EXPECT_EQ(S(b_.Clamp(Param(F32({})), x, Param(F32({3})))), "f32[3]");
  EXPECT_EQ(b_.Clamp(Param(F32({2})), x, Param(F32({}))), nullptr);
  EXPECT_THAT(Error(), HasSubstr("min f32[2] must be a scalar or an array with the shape of "
                                 "operand f32[3]"));
}

TEST_F(ElementwiseShapeTest, ConvertTakesTheTargetType) {
  Instruction* x = Param(F32({2, 3}));
  EXPECT_EQ(S(b_.Convert(x, DType::kBF16)), "bf16[2,3]");
  EXPECT_EQ(b_.Convert(x, DType::kToken), nullptr);
  EXPECT_THAT(Error(), HasSubstr("declared shape token[] must be an array"));
}

TEST_F(ElementwiseShapeTest, BitcastConvertAddsOrRemovesTheTrailingDimension) {
  EXPECT_EQ(S(b_.BitcastConvert(Param(F32({4})), DType::kS32)), "s32[4]");
  EXPECT_EQ(S(b_.BitcastConvert(Param(F32({4})), DType::kU8)), "u8[4,4]");
  EXPECT_EQ(S(b_.BitcastConvert(Param(Shape::Array(DType::kU16, {3, 4})), DType::kF64)), "f64[3]");
  EXPECT_EQ(b_.BitcastConvert(Param(Shape::Array(DType::kU8, {3, 2})), DType::kF32), nullptr);
  EXPECT_THAT(Error(), HasSubstr("converting u8 to f32 needs a last operand dimension of size 4 "
                                 "but the operand has shape u8[3,2]"));
}

TEST_F(ElementwiseShapeTest, ReducePrecisionNeedsValidBitCounts) {
  Attributes attributes;
  attributes.exponent_bits = 5;
  attributes.mantissa_bits = 10;
  Instruction* x = Param(F32({3}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kReducePrecision, {x}, attributes)), "f32[3]");
  attributes.exponent_bits = 0;
  EXPECT_EQ(b_.AddInstruction(Opcode::kReducePrecision, {x}, attributes), nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("needs exponent_bits >= 1 and mantissa_bits >= 0 but has 0 and 10"));
}

TEST_F(ElementwiseShapeTest, MapAppliesAScalarComputation) {
  Computation* to_s32 = Sub("to_s32", [](ComputationBuilder& c) {
    Instruction* a = c.Parameter(0, F32({}));
    Instruction* b = c.Parameter(1, F32({}));
    return c.Convert(c.Add(a, b), DType::kS32);
  });
  Instruction* x = Param(F32({2, 5}));
  Instruction* y = Param(F32({2, 5}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kMap, {x, y}, {}, {to_s32})), "s32[2,5]");
  Attributes all_dims;
  all_dims.dimensions = {0, 1};
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kMap, {x, y}, all_dims, {to_s32})), "s32[2,5]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kMap, {x}, {}, {to_s32}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("to_apply %to_s32 has signature (f32[], f32[])->s32[] but must "
                                 "map one scalar per operand to a scalar"));
}

}  // namespace
}  // namespace alpa::ir
