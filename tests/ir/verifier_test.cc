// One test per verifier rule: a valid module is built, then broken in one place.
#include "ir/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

// main(x: f32[4], y: f32[4]) = negate(add(x, y)), plus a callee "twice" used by a call.
class VerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModuleBuilder mb("m");
    ComputationBuilder twice = mb.NewComputation("twice");
    Instruction* t = twice.Parameter(0, F32({4}), "t");
    Result<Computation*> twice_built = twice.Build(twice.Add(t, t));
    ASSERT_TRUE(twice_built.ok()) << twice_built.status().ToString();
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* x = b.Parameter(0, F32({4}), "x");
    Instruction* y = b.Parameter(1, F32({4}), "y");
    Instruction* sum = b.AddInstruction(Opcode::kAdd, {x, y}, {}, {}, Shape(), "sum");
    Instruction* call = b.AddInstruction(Opcode::kCall, {sum}, {}, {*twice_built}, Shape(), "call");
    Result<Computation*> main =
        b.Build(b.AddInstruction(Opcode::kNegate, {call}, {}, {}, Shape(), "neg"));
    ASSERT_TRUE(main.ok()) << main.status().ToString();
    Result<std::unique_ptr<Module>> module = mb.Build(*main);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    module_ = std::move(module).value();
    main_ = module_->GetComputation("main");
    twice_ = module_->GetComputation("twice");
  }

  Instruction* Get(std::string_view name) const { return main_->GetInstruction(name); }
  std::string Verify() const { return VerifyModule(*module_).message(); }

  std::unique_ptr<Module> module_;
  Computation* main_ = nullptr;
  Computation* twice_ = nullptr;
};

TEST_F(VerifierTest, ValidModulePasses) { EXPECT_TRUE(VerifyModule(*module_).ok()); }

TEST_F(VerifierTest, EntryMustExist) {
  module_->set_entry(nullptr);
  EXPECT_EQ(Verify(), "module m: has no entry computation");
}

TEST_F(VerifierTest, EntryMustBelongToTheModule) {
  Computation stray("stray");
  module_->set_entry(&stray);
  EXPECT_EQ(Verify(), "module m: entry computation %stray is not in the module");
}

TEST_F(VerifierTest, EveryComputationHasARoot) {
  twice_->set_root(nullptr);
  EXPECT_EQ(Verify(), "computation %twice: has no root instruction");
}

TEST_F(VerifierTest, ParameterNumbersAreZeroToNMinusOne) {
  Get("y")->mutable_attributes().parameter_number = 2;
  EXPECT_EQ(Verify(),
            "computation %main: parameter %y has number 2 but the computation has 2 "
            "parameter(s), numbered 0..1");
}

TEST_F(VerifierTest, ParameterNumbersAreUsedOnce) {
  Get("y")->mutable_attributes().parameter_number = 0;
  EXPECT_EQ(Verify(), "computation %main: parameters %x and %y both have number 0");
}

TEST_F(VerifierTest, OperandsBelongToTheSameComputation) {
  Get("sum")->ReplaceOperand(1, twice_->GetInstruction("t"));
  EXPECT_EQ(Verify(), "computation %main: %sum: operand 1 (%t) belongs to another computation");
}

TEST_F(VerifierTest, OperandsArePresent) {
  Get("sum")->ReplaceOperand(0, nullptr);
  EXPECT_EQ(Verify(), "computation %main: %sum: operand 0 is missing");
}

TEST_F(VerifierTest, GraphHasNoCycle) {
  Get("sum")->ReplaceOperand(1, Get("neg"));
  EXPECT_THAT(Verify(), HasSubstr("computation %main: %"));
  EXPECT_THAT(Verify(), HasSubstr("is part of a cycle"));
}

TEST_F(VerifierTest, OperandCountPerOpcode) {
  Get("neg")->AppendOperand(Get("x"));
  EXPECT_EQ(Verify(), "computation %main: negate %neg: expects 1 operand(s) but has 2");
}

TEST_F(VerifierTest, DeclaredShapeMustMatchTheRule) {
  Get("sum")->set_shape(F32({5}));
  EXPECT_EQ(Verify(),
            "computation %main: add %sum: declared shape f32[5] does not match the "
            "inferred shape f32[4]");
}

TEST_F(VerifierTest, ShapeCheckIgnoresLayouts) {
  Shape with_layout = F32({4});
  with_layout.set_layout(Layout{{0}, ""});
  Get("sum")->set_shape(with_layout);
  EXPECT_TRUE(VerifyModule(*module_).ok());
}

TEST_F(VerifierTest, NegativeDimensionsAreRejected) {
  Get("x")->set_shape(F32({-1}));
  EXPECT_EQ(Verify(), "computation %main: %x: shape f32[-1] has a negative dimension");
}

TEST_F(VerifierTest, CalledComputationSignature) {
  twice_->GetInstruction("t")->set_shape(F32({3}));
  twice_->root()->set_shape(F32({3}));
  EXPECT_EQ(Verify(),
            "computation %main: call %call: callee %twice has signature (f32[3])->f32[3] "
            "but is given (f32[4])");
}

TEST_F(VerifierTest, AttributeRanges) {
  Instruction* neg = Get("neg");
  auto transpose = std::make_unique<Instruction>("tr", Opcode::kTranspose, F32({4}));
  transpose->AppendOperand(neg);
  transpose->mutable_attributes().dimensions = {1};
  main_->set_root(main_->AddInstruction(std::move(transpose)));
  EXPECT_EQ(Verify(),
            "computation %main: transpose %tr: dimensions entry 1 is out of range [0, 1)");
}

TEST_F(VerifierTest, InstructionNamesAreUniqueInTheirComputation) {
  Instruction* sum = Get("sum");
  sum->set_name("t");  // %twice has a %t too: names are scoped per computation, as in XLA
  EXPECT_EQ(Verify(), "");
  sum->set_name("neg");
  EXPECT_EQ(Verify(), "module m: computation %main: two instructions are named %neg");
}

TEST_F(VerifierTest, CalledComputationsBelongToTheModule) {
  Computation stray("stray");
  Get("call")->ReplaceCalledComputation(0, &stray);
  EXPECT_EQ(Verify(),
            "module m: computation %main: %call calls %stray, which is not in the module");
}

TEST_F(VerifierTest, NoRecursion) {
  auto call = std::make_unique<Instruction>("again", Opcode::kCall, F32({4}));
  call->AppendOperand(twice_->GetInstruction("t"));
  call->AppendCalledComputation(twice_);
  twice_->AddInstruction(std::move(call));
  EXPECT_EQ(Verify(), "module m: computation %twice calls itself (recursion is not allowed)");
}

// A module parsed from text knows where each instruction was defined: errors start there.
TEST_F(VerifierTest, ErrorsStartWithTheInstructionsSourceLocation) {
  module_->set_source_file("model.hlo");
  Get("neg")->set_location({7, 3});
  Get("neg")->set_shape(F32({5}));
  EXPECT_EQ(Verify(),
            "model.hlo:7:3: computation %main: negate %neg: declared shape f32[5] does not match "
            "the inferred shape f32[4]");
}

TEST_F(VerifierTest, ModuleWideErrorsStartWithTheFile) {
  module_->set_source_file("model.hlo");
  module_->set_entry(nullptr);
  EXPECT_EQ(Verify(), "model.hlo: module m: has no entry computation");
}

}  // namespace
}  // namespace alpa::ir
