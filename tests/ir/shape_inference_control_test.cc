// Shape rules of tuples and control flow (shape_inference_control.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using ControlShapeTest = IrTest;

TEST_F(ControlShapeTest, TupleAndGetTupleElement) {
  Instruction* t = b_.Tuple({Param(F32({2})), Param(S32({})), b_.Tuple({})});
  EXPECT_EQ(S(t), "(f32[2], s32[], ())");
  EXPECT_EQ(S(b_.GetTupleElement(t, 1)), "s32[]");
  EXPECT_EQ(b_.GetTupleElement(t, 3), nullptr);
  EXPECT_THAT(Error(), HasSubstr("get-tuple-element %get-tuple-element.2: index 3 is out of range "
                                 "for tuple (f32[2], s32[], ())"));
  Reset();
  EXPECT_EQ(b_.GetTupleElement(Param(F32({2})), 0), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand must be a tuple but has shape f32[2]"));
}

TEST_F(ControlShapeTest, CallReturnsTheCalleeResult) {
  Computation* square = Sub("square", [](ComputationBuilder& c) {
    Instruction* x = c.Parameter(0, F32({3}));
    return c.Convert(c.Multiply(x, x), DType::kF64);
  });
  EXPECT_EQ(S(b_.Call(square, {Param(F32({3}))})), "f64[3]");
  EXPECT_EQ(b_.Call(square, {Param(F32({4}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("call %call.2: callee %square has signature (f32[3])->f64[3] but "
                                 "is given (f32[4])"));
}

// Loop state (s32[] counter, f32[4] value).
Shape LoopState() { return Shape::Tuple({S32({}), F32({4})}); }

TEST_F(ControlShapeTest, WhileLoop) {
  Computation* condition = Sub("cond", [](ComputationBuilder& c) {
    Instruction* counter = c.GetTupleElement(c.Parameter(0, LoopState()), 0);
    Instruction* limit = c.Constant(Literal::Scalar(DType::kS32, 10));
    return c.Compare(counter, limit, ComparisonDirection::kLt);
  });
  Computation* body = Sub("body", [](ComputationBuilder& c) {
    Instruction* state = c.Parameter(0, LoopState());
    Instruction* counter = c.GetTupleElement(state, 0);
    Instruction* value = c.GetTupleElement(state, 1);
    Instruction* one = c.Constant(Literal::Scalar(DType::kS32, 1));
    return c.Tuple({c.Add(counter, one), c.Add(value, value)});
  });
  Instruction* init = Param(LoopState());
  EXPECT_EQ(S(b_.While(condition, body, init)), "(s32[], f32[4])");
  // The condition must return pred[]; the body must map the state to itself.
  EXPECT_EQ(b_.While(body, body, init), nullptr);
  EXPECT_THAT(Error(), HasSubstr("while %while.2: condition %body must return pred[] but returns "
                                 "(s32[], f32[4])"));
}

TEST_F(ControlShapeTest, WhileBodySignatureMismatch) {
  Computation* condition = Sub("cond", [](ComputationBuilder& c) {
    c.Parameter(0, LoopState());
    return c.Constant(Literal::Scalar(DType::kPred, 1));
  });
  Computation* shrinking_body = Sub("body", [](ComputationBuilder& c) {
    Instruction* state = c.Parameter(0, LoopState());
    return c.Tuple({c.GetTupleElement(state, 0)});
  });
  EXPECT_EQ(b_.While(condition, shrinking_body, Param(LoopState())), nullptr);
  EXPECT_THAT(Error(), HasSubstr("body %body returns (s32[]) but must return the loop state "
                                 "(s32[], f32[4])"));
  Reset();
  EXPECT_EQ(b_.While(condition, shrinking_body, Param(F32({4}))), nullptr);
  EXPECT_THAT(Error(), HasSubstr("condition %cond has signature ((s32[], f32[4]))->pred[] but is "
                                 "given (f32[4])"));
}

TEST_F(ControlShapeTest, Conditional) {
  Computation* negate =
      Sub("negate", [](ComputationBuilder& c) { return c.Negate(c.Parameter(0, F32({2}))); });
  Computation* first = Sub("first", [](ComputationBuilder& c) {
    Instruction* x = c.Parameter(0, F32({2, 2}));
    return c.Reshape(c.Slice(x, {{0, 1, 1}, {0, 2, 1}}), {2});
  });
  Instruction* a = Param(F32({2}));
  Instruction* m = Param(F32({2, 2}));
  EXPECT_EQ(S(b_.Conditional(Param(Shape::Scalar(DType::kPred)), {negate, first}, {a, m})),
            "f32[2]");
  EXPECT_EQ(S(b_.Conditional(Param(S32({})), {negate, first, negate}, {a, m, a})), "f32[2]");
  EXPECT_EQ(b_.Conditional(Param(Shape::Scalar(DType::kPred)), {negate}, {a}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("selector pred[] must be s32[], or pred[] with exactly 2 branches "
                                 "(1 given)"));
}

TEST_F(ControlShapeTest, ConditionalBranchMismatch) {
  Computation* negate =
      Sub("negate", [](ComputationBuilder& c) { return c.Negate(c.Parameter(0, F32({2}))); });
  Computation* widen = Sub("widen", [](ComputationBuilder& c) {
    return c.Convert(c.Parameter(0, F32({2})), DType::kF64);
  });
  Instruction* a = Param(F32({2}));
  EXPECT_EQ(b_.Conditional(Param(S32({})), {negate, widen}, {a, a}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("conditional %conditional.1: branch 1 %widen returns f64[2] but "
                                 "branch 0 returns f32[2]"));
  Reset();
  Instruction* index = Param(S32({}));
  EXPECT_EQ(b_.Conditional(index, {negate, negate}, {Param(F32({2})), Param(F32({3}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("branch 1 %negate has signature (f32[2])->f32[2] but is given "
                                 "(f32[3])"));
}

}  // namespace
}  // namespace alpa::ir
