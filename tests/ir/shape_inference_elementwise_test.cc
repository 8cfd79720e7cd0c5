// Shape rules of elementwise ops (shape_inference_elementwise.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// One row per elementwise unary opcode: an accepted operand and its result (on an empty
// dimension, which must survive), and a rejected operand with the rule's wording.
struct UnaryCase {
  Opcode opcode;
  DType accepted;
  std::string result;
  DType rejected;
  std::string why;
};

TEST_F(ElementwiseShapeTest, EveryUnaryOpAcceptsItsElementTypesAndRejectsTheRest) {
  const std::string fc = "a floating-point or complex";
  const std::vector<UnaryCase> cases = {
      {Opcode::kAbs, DType::kS8, "s8[2,0]", DType::kU32, "a signed or complex"},
      {Opcode::kCbrt, DType::kF64, "f64[2,0]", DType::kS32, fc},
      {Opcode::kCeil, DType::kBF16, "bf16[2,0]", DType::kC64, "a floating-point"},
      {Opcode::kClz, DType::kU8, "u8[2,0]", DType::kF32, "an integer"},
      {Opcode::kCos, DType::kC64, "c64[2,0]", DType::kS32, fc},
      {Opcode::kErf, DType::kF32, "f32[2,0]", DType::kC64, "a floating-point"},
      {Opcode::kExp, DType::kF16, "f16[2,0]", DType::kPred, fc},
      {Opcode::kExpm1, DType::kF32, "f32[2,0]", DType::kS64, fc},
      {Opcode::kFloor, DType::kF16, "f16[2,0]", DType::kS32, "a floating-point"},
      // Real and imag of a complex give its component type; of a real float, the same type.
      {Opcode::kImag, DType::kC128, "f64[2,0]", DType::kS32, fc},
      {Opcode::kIsFinite, DType::kBF16, "pred[2,0]", DType::kC64, "a floating-point"},
      {Opcode::kLog, DType::kC128, "c128[2,0]", DType::kU8, fc},
      {Opcode::kLog1p, DType::kF64, "f64[2,0]", DType::kS8, fc},
      {Opcode::kLogistic, DType::kF32, "f32[2,0]", DType::kS32, fc},
      // Negate wraps unsigned integers, so only pred is refused.
      {Opcode::kNegate, DType::kU32, "u32[2,0]", DType::kPred, "a numeric"},
      {Opcode::kNot, DType::kPred, "pred[2,0]", DType::kF32, "a pred or integer"},
      {Opcode::kPopulationCount, DType::kS64, "s64[2,0]", DType::kPred, "an integer"},
      {Opcode::kReal, DType::kF32, "f32[2,0]", DType::kS32, fc},
      {Opcode::kRoundNearestAfz, DType::kF32, "f32[2,0]", DType::kS32, "a floating-point"},
      {Opcode::kRoundNearestEven, DType::kF64, "f64[2,0]", DType::kC64, "a floating-point"},
      {Opcode::kRsqrt, DType::kF32, "f32[2,0]", DType::kS32, fc},
      {Opcode::kSign, DType::kC64, "c64[2,0]", DType::kU8, "a signed or complex"},
      {Opcode::kSin, DType::kF32, "f32[2,0]", DType::kS32, fc},
      {Opcode::kSqrt, DType::kF32, "f32[2,0]", DType::kS32, fc},
      {Opcode::kTan, DType::kF32, "f32[2,0]", DType::kS32, fc},
      {Opcode::kTanh, DType::kC64, "c64[2,0]", DType::kS32, fc},
  };
  int covered = 0;
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(std::string(OpcodeName(c.opcode)));
    Reset();
    EXPECT_EQ(S(b_.Unary(c.opcode, Param(c.accepted, {2, 0}))), c.result);
    Reset();
    Instruction* bad = Param(c.rejected, {3});
    EXPECT_EQ(b_.Unary(c.opcode, bad), nullptr);
    EXPECT_THAT(Error(),
                HasSubstr("operand must have " + c.why + " element type but has shape " + S(bad)));
    ++covered;
  }
  // The table lists every opcode IsElementwiseUnary admits.
  int unary = 0;
  for (int i = 0; i < kOpcodeCount; ++i) unary += IsElementwiseUnary(static_cast<Opcode>(i));
  EXPECT_EQ(covered, unary);
}

TEST_F(ElementwiseShapeTest, AbsAndSignKeepSignedAndFloatTypes) {
  EXPECT_EQ(S(b_.Abs(Param(DType::kS32, {4}))), "s32[4]");
  EXPECT_EQ(S(b_.Unary(Opcode::kSign, Param(DType::kF16, {4}))), "f16[4]");
  EXPECT_EQ(S(b_.Unary(Opcode::kSign, Param(DType::kS64, {}))), "s64[]");
  EXPECT_EQ(S(b_.Unary(Opcode::kReal, Param(DType::kC64, {1}))), "f32[1]");
}

// One row per elementwise binary opcode: an accepted pair and its result, and a rejected pair.
struct BinaryCase {
  Opcode opcode;
  DType lhs;
  DType rhs;
  std::string result;
  DType bad_lhs;
  DType bad_rhs;
  std::string why;
};

TEST_F(ElementwiseShapeTest, EveryBinaryOpAcceptsItsElementTypesAndRejectsTheRest) {
  const std::string equal = "operands must have equal element types";
  const std::string ints = "operands must be integers";
  const std::string logical = "operands must be pred or integers";
  const std::vector<BinaryCase> cases = {
      {Opcode::kAdd, DType::kS32, DType::kS32, "s32[0,3]", DType::kS32, DType::kU32, equal},
      {Opcode::kAnd, DType::kPred, DType::kPred, "pred[0,3]", DType::kF32, DType::kF32, logical},
      {Opcode::kAtan2, DType::kF64, DType::kF64, "f64[0,3]", DType::kS32, DType::kS32,
       "operands must be floating-point"},
      {Opcode::kComplex, DType::kF64, DType::kF64, "c128[0,3]", DType::kBF16, DType::kBF16,
       "operands must be f32 or f64"},
      {Opcode::kDivide, DType::kU8, DType::kU8, "u8[0,3]", DType::kF32, DType::kF64, equal},
      {Opcode::kMaximum, DType::kF16, DType::kF16, "f16[0,3]", DType::kF16, DType::kBF16, equal},
      {Opcode::kMinimum, DType::kS8, DType::kS8, "s8[0,3]", DType::kS8, DType::kS16, equal},
      {Opcode::kMultiply, DType::kC64, DType::kC64, "c64[0,3]", DType::kC64, DType::kF32, equal},
      {Opcode::kOr, DType::kU16, DType::kU16, "u16[0,3]", DType::kBF16, DType::kBF16, logical},
      {Opcode::kPower, DType::kF32, DType::kF32, "f32[0,3]", DType::kF32, DType::kS32, equal},
      {Opcode::kRemainder, DType::kS64, DType::kS64, "s64[0,3]", DType::kS64, DType::kF64, equal},
      // Shifts may mix integer types and keep the lhs type.
      {Opcode::kShiftLeft, DType::kS8, DType::kU32, "s8[0,3]", DType::kPred, DType::kU32, ints},
      {Opcode::kShiftRightArithmetic, DType::kS32, DType::kS32, "s32[0,3]", DType::kS32,
       DType::kF32, ints},
      {Opcode::kShiftRightLogical, DType::kU64, DType::kS8, "u64[0,3]", DType::kF64, DType::kF64,
       ints},
      {Opcode::kSubtract, DType::kBF16, DType::kBF16, "bf16[0,3]", DType::kU8, DType::kS8, equal},
      {Opcode::kXor, DType::kS32, DType::kS32, "s32[0,3]", DType::kC64, DType::kC64, logical},
  };
  int covered = 0;
  for (const BinaryCase& c : cases) {
    SCOPED_TRACE(std::string(OpcodeName(c.opcode)));
    Reset();
    EXPECT_EQ(S(b_.Binary(c.opcode, Param(c.lhs, {0, 3}), Param(c.rhs, {0, 3}))), c.result);
    Reset();
    EXPECT_EQ(b_.Binary(c.opcode, Param(c.bad_lhs, {2}), Param(c.bad_rhs, {2})), nullptr);
    EXPECT_THAT(Error(), HasSubstr(c.why));
    // Whatever the types, unequal dims are refused.
    Reset();
    EXPECT_EQ(b_.Binary(c.opcode, Param(c.lhs, {2}), Param(c.rhs, {3})), nullptr);
    EXPECT_THAT(Error(), HasSubstr("operands must have equal dimensions"));
    ++covered;
  }
  int binary = 0;
  for (int i = 0; i < kOpcodeCount; ++i) binary += IsElementwiseBinary(static_cast<Opcode>(i));
  EXPECT_EQ(covered, binary);
}

TEST_F(ElementwiseShapeTest, CompareGivesPredAndNeedsEqualTypes) {
  EXPECT_EQ(
      S(b_.Compare(Param(DType::kS32, {0}), Param(DType::kS32, {0}), ComparisonDirection::kEq)),
      "pred[0]");
  EXPECT_EQ(b_.Compare(Param(DType::kS32, {2}), Param(DType::kU32, {2}), ComparisonDirection::kLt),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("compare %compare.2: operands must have equal element types but "
                                 "have shapes s32[2] and u32[2]"));
  Reset();
  EXPECT_EQ(b_.Compare(Param(F32({2})), Param(F32({2, 1})), ComparisonDirection::kLt), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operands must have equal dimensions"));
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
