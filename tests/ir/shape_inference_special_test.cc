// Shape rules of rng, batch-norm, linear algebra, tokens, copies and the opaque ops
// (shape_inference_special.cc, shape_inference.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/shape_inference.h"
#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using SpecialShapeTest = IrTest;

TEST_F(SpecialShapeTest, Rng) {
  Instruction* lo = b_.ConstantScalar(DType::kF32, 0);
  Instruction* hi = b_.ConstantScalar(DType::kF32, 1);
  EXPECT_EQ(S(b_.Rng(lo, hi, {3, 4}, RandomDistribution::kUniform)), "f32[3,4]");
  Instruction* a = b_.ConstantScalar(DType::kS32, 0);
  Instruction* b = b_.ConstantScalar(DType::kS32, 9);
  EXPECT_EQ(S(b_.Rng(a, b, {2}, RandomDistribution::kUniform)), "s32[2]");
  EXPECT_EQ(b_.Rng(a, b, {2}, RandomDistribution::kNormal), nullptr);
  EXPECT_THAT(Error(), HasSubstr("rng %rng.3: parameters s32[] and s32[] must be scalars of one "
                                 "floating-point type"));
}

TEST_F(SpecialShapeTest, RngBitGenerator) {
  Instruction* state = Param(Shape::Array(DType::kU64, {2}));
  EXPECT_EQ(S(b_.RngBitGenerator(state, Shape::Array(DType::kU32, {4, 4}))), "(u64[2], u32[4,4])");
  EXPECT_EQ(b_.RngBitGenerator(Param(F32({2})), Shape::Array(DType::kU32, {4})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("state f32[2] must be a rank-1 unsigned integer array"));
}

TEST_F(SpecialShapeTest, BatchNorm) {
  Attributes attributes;
  attributes.feature_index = 3;
  attributes.epsilon = 1e-5;
  Instruction* x = Param(F32({8, 5, 5, 16}));
  Instruction* scale = Param(F32({16}));
  Instruction* offset = Param(F32({16}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kBatchNormTraining, {x, scale, offset}, attributes)),
            "(f32[8,5,5,16], f32[16], f32[16])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kBatchNormInference, {x, scale, offset, scale, offset},
                                attributes)),
            "f32[8,5,5,16]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kBatchNormGrad, {x, scale, scale, offset, x}, attributes)),
            "(f32[8,5,5,16], f32[16], f32[16])");
  attributes.feature_index = 1;
  EXPECT_EQ(b_.AddInstruction(Opcode::kBatchNormTraining, {x, scale, offset}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand 1 f32[16] must be the feature vector f32[5]"));
}

TEST_F(SpecialShapeTest, CholeskyAndTriangularSolve) {
  Instruction* a = Param(F32({2, 4, 4}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCholesky, {a})), "f32[2,4,4]");
  Attributes left;
  left.opaque = {{"left_side", "true"}};
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kTriangularSolve, {a, Param(F32({2, 4, 7}))}, left)),
            "f32[2,4,7]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kTriangularSolve, {a, Param(F32({2, 7, 4}))})),
            "f32[2,7,4]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kCholesky, {Param(F32({4, 3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand f32[4,3] must be floating-point square matrices"));
  Reset();
  EXPECT_EQ(b_.AddInstruction(Opcode::kTriangularSolve, {Param(F32({4, 4})), Param(F32({4, 7}))}),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("b f32[4,7] does not match a f32[4,4] (left_side=false)"));
}

TEST_F(SpecialShapeTest, TokensCopiesAndIdentities) {
  Instruction* token = b_.AddInstruction(Opcode::kAfterAll, {});
  EXPECT_EQ(S(token), "token[]");
  Instruction* x = Param(F32({3}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAddDependency, {x, token})), "f32[3]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCopy, {x})), "f32[3]");
  Instruction* tuple = b_.Tuple({x, token});
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kOptimizationBarrier, {tuple})), "(f32[3], token[])");
  Instruction* start = b_.AddInstruction(Opcode::kCopyStart, {x});
  EXPECT_EQ(S(start), "(f32[3], f32[3], u32[])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCopyDone, {start})), "f32[3]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kAfterAll, {token, x}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("after-all %after-all.2: operand 1 must be a token but has shape "
                                 "f32[3]"));
}

TEST_F(SpecialShapeTest, OpaqueOpsKeepTheirDeclaredShape) {
  Attributes attributes;
  attributes.custom_call_target = "my_kernel";
  Instruction* x = Param(F32({3}));
  Shape declared = Shape::Tuple({F32({7}), S32({})});
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCustomCall, {x, x}, attributes, {}, declared)),
            "(f32[7], s32[])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kBitcast, {x}, {}, {}, S32({3, 1}))), "s32[3,1]");
  EXPECT_FALSE(HasShapeRule(Opcode::kCustomCall));
  EXPECT_TRUE(HasShapeRule(Opcode::kDot));
}

// The ops without a rule (their result depends on a target, a device or runtime data) keep
// whatever shape they are declared with, operands or not.
TEST(OpaqueShapeTest, EveryOpaqueOpKeepsItsDeclaredShape) {
  const std::vector<Opcode> opaque = {
      Opcode::kParameter, Opcode::kCustomCall,     Opcode::kBitcast,
      Opcode::kFft,       Opcode::kSend,           Opcode::kSendDone,
      Opcode::kRecv,      Opcode::kRecvDone,       Opcode::kInfeed,
      Opcode::kOutfeed,   Opcode::kAsyncStart,     Opcode::kAsyncUpdate,
      Opcode::kAsyncDone, Opcode::kDynamicReshape, Opcode::kRngGetAndUpdateState};
  const Shape declared = Shape::Tuple({F32({2, 0}), Shape::Token()});
  int without_rule = 0;
  for (int i = 0; i < kOpcodeCount; ++i) without_rule += !HasShapeRule(static_cast<Opcode>(i));
  EXPECT_EQ(without_rule, static_cast<int>(opaque.size()));
  for (Opcode opcode : opaque) {
    SCOPED_TRACE(std::string(OpcodeName(opcode)));
    EXPECT_FALSE(HasShapeRule(opcode));
    Instruction operand("operand", Opcode::kParameter, S32({7}));
    Instruction instruction("x", opcode, declared);
    instruction.AppendOperand(&operand);
    Result<Shape> shape = InferShape(instruction);
    ASSERT_TRUE(shape.ok()) << shape.status().ToString();
    EXPECT_EQ(shape->ToString(false), "(f32[2,0], token[])");
  }
}

TEST_F(SpecialShapeTest, IdentityOpsTakeExactlyOneOperand) {
  Instruction* x = Param(F32({3}));
  Instruction* y = Param(S32({}));
  for (Opcode opcode : {Opcode::kCopy, Opcode::kDomain, Opcode::kOptimizationBarrier}) {
    SCOPED_TRACE(std::string(OpcodeName(opcode)));
    EXPECT_EQ(S(b_.AddInstruction(opcode, {y})), "s32[]");
    EXPECT_EQ(b_.AddInstruction(opcode, {x, y}), nullptr);
    EXPECT_THAT(Error(), HasSubstr("expects 1 operand(s) but has 2"));
    Reset();
    x = Param(F32({3}));
    y = Param(S32({}));
  }
}

TEST_F(SpecialShapeTest, TokenAndAsyncCopyOpsRejectMalformedOperands) {
  Instruction* x = Param(F32({3}));
  // add-dependency orders its first operand after a token; a second array is no token.
  EXPECT_EQ(b_.AddInstruction(Opcode::kAddDependency, {x, x}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("add-dependency %add-dependency.1: operand 1 must be a token but "
                                 "has shape f32[3]"));
  Reset();
  // after-all of nothing is a token too.
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAfterAll, {})), "token[]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kCopyStart, {Param(F32({3})), Param(F32({3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("copy-start %copy-start.1: expects 1 operand(s) but has 2"));
  Reset();
  EXPECT_EQ(b_.AddInstruction(Opcode::kCopyDone, {Param(F32({3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand must be the tuple of a copy-start but has shape f32[3]"));
  Reset();
  // partition-id and replica-id read the device, not an operand.
  EXPECT_EQ(b_.AddInstruction(Opcode::kPartitionId, {Param(F32({3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("partition-id %partition-id.1: expects 0 operand(s) but has 1"));
  Reset();
  EXPECT_EQ(b_.AddInstruction(Opcode::kReplicaId, {Param(F32({3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("expects 0 operand(s) but has 1"));
}

TEST_F(SpecialShapeTest, BatchNormInferenceAndGradCheckEveryOperand) {
  Attributes attributes;
  attributes.feature_index = 1;
  attributes.epsilon = 1e-3;
  // feature_index 1 of f32[4,3,2]: the feature vectors are f32[3].
  Instruction* x = Param(F32({4, 3, 2}));
  Instruction* v = Param(F32({3}));
  Instruction* wrong = Param(F32({4}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kBatchNormInference, {x, v, v, v, v}, attributes)),
            "f32[4,3,2]");
  // The variance (operand 4) is the wrong length.
  EXPECT_EQ(b_.AddInstruction(Opcode::kBatchNormInference, {x, v, v, v, wrong}, attributes),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand 4 f32[4] must be the feature vector f32[3]"));
  Reset();
  x = Param(F32({4, 3, 2}));
  v = Param(F32({3}));
  // grad_output (operand 4) must have the operand's shape.
  EXPECT_EQ(
      b_.AddInstruction(Opcode::kBatchNormGrad, {x, v, v, v, Param(F32({4, 3, 1}))}, attributes),
      nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand 4 f32[4,3,1] must be the operand's shape f32[4,3,2]"));
  Reset();
  attributes.feature_index = 3;
  x = Param(F32({4, 3, 2}));
  v = Param(F32({3}));
  EXPECT_EQ(b_.AddInstruction(Opcode::kBatchNormGrad, {x, v, v, v, x}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("feature_index 3 is out of range [0, 3)"));
  Reset();
  attributes.feature_index = 0;
  Instruction* ints = Param(S32({2}));
  EXPECT_EQ(b_.AddInstruction(Opcode::kBatchNormTraining, {ints, ints, ints}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand s32[2] must be floating-point"));
}

TEST_F(SpecialShapeTest, ConstantTakesTheLiteralShape) {
  EXPECT_EQ(S(b_.Constant(Literal::FromInts(S32({2, 2}), {1, 2, 3, 4}))), "s32[2,2]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kConstant, {}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("constant %constant.2: has no literal"));
}

TEST_F(SpecialShapeTest, FusionLikeCall) {
  Computation* fused = Sub("fused", [](ComputationBuilder& c) {
    Instruction* x = c.Parameter(0, F32({4}));
    return c.Exp(c.Negate(x));
  });
  Instruction* x = Param(F32({4}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kFusion, {x}, {}, {fused})), "f32[4]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kFusion, {x, x}, {}, {fused}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("fusion %fusion.2: callee %fused has signature (f32[4])->f32[4] "
                                 "but is given (f32[4], f32[4])"));
}

TEST_F(SpecialShapeTest, StochasticConvertAndCollectiveBroadcast) {
  Instruction* x = Param(F32({2}));
  Instruction* bits = Param(Shape::Array(DType::kU32, {2}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kStochasticConvert, {x, bits}, {}, {},
                                Shape::Scalar(DType::kBF16))),
            "bf16[2]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCollectiveBroadcast, {x})), "f32[2]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kDomain, {x})), "f32[2]");
  EXPECT_EQ(
      b_.AddInstruction(Opcode::kStochasticConvert, {x, Param(Shape::Array(DType::kU16, {2}))}, {},
                        {}, Shape::Scalar(DType::kBF16)),
      nullptr);
  EXPECT_THAT(Error(), HasSubstr("random operand u16[2] must be unsigned with the dims and bit "
                                 "width of f32[2]"));
}

// Every opcode either has a rule or is opaque: no opcode reaches the dispatcher's fallback, even
// with no operands at all (the rules report missing operands as ordinary errors).
TEST(ShapeInferenceCoverageTest, EveryOpcodeHasARule) {
  for (int i = 0; i < kOpcodeCount; ++i) {
    const auto opcode = static_cast<Opcode>(i);
    Instruction instruction("x", opcode, F32({1}));
    Result<Shape> shape = InferShape(instruction);
    if (!shape.ok()) {
      EXPECT_EQ(shape.status().code(), StatusCode::kInvalidArgument)
          << OpcodeName(opcode) << ": " << shape.status().ToString();
    }
  }
}

}  // namespace
}  // namespace alpa::ir
