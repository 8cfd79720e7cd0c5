// Small tests of the existing ir core: dtype, shape, opcode, literal, computation, module.
#include <gtest/gtest.h>

#include "ir/computation.h"
#include "ir/dtype.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/opcode.h"
#include "ir/shape.h"

namespace alpa::ir {
namespace {

TEST(DTypeTest, NamesSizesAndClasses) {
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
  EXPECT_EQ(ParseDType("f8e4m3fn"), DType::kF8E4M3FN);
  EXPECT_EQ(ParseDType("f31"), std::nullopt);
  EXPECT_EQ(DTypeByteSize(DType::kC128), 16);
  EXPECT_TRUE(IsFloating(DType::kBF16));
  EXPECT_FALSE(IsInteger(DType::kPred));
  EXPECT_TRUE(IsUnsignedInteger(DType::kU4));
  EXPECT_FALSE(IsArrayDType(DType::kToken));
}

TEST(ShapeTest, TextCountsAndCompatibility) {
  Shape a = Shape::Array(DType::kF32, {2, 3});
  a.set_layout(Layout{{1, 0}, ""});
  EXPECT_EQ(a.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(a.ToString(false), "f32[2,3]");
  EXPECT_EQ(a.ElementCount(), 6);
  EXPECT_EQ(a.ByteSize(), 24);
  EXPECT_TRUE(a.Compatible(Shape::Array(DType::kF32, {2, 3})));
  EXPECT_FALSE(a.Compatible(Shape::Array(DType::kF32, {3, 2})));
  EXPECT_EQ(Shape::Array(DType::kF32, {4, 0}).ElementCount(), 0);
  Shape t = Shape::Tuple({a, Shape::Token()});
  EXPECT_EQ(t.ToString(false), "(f32[2,3], token[])");
  EXPECT_EQ(t.LeafCount(), 2);
  EXPECT_EQ(RowMajorStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(OpcodeTest, NamesAndClasses) {
  EXPECT_EQ(OpcodeName(Opcode::kExp), "exponential");
  EXPECT_EQ(ParseOpcode("optimization-barrier"), Opcode::kOptimizationBarrier);
  EXPECT_TRUE(IsElementwiseBinary(Opcode::kShiftLeft));
  EXPECT_FALSE(IsElementwiseUnary(Opcode::kConvert));
  EXPECT_TRUE(IsCollective(Opcode::kAllGatherStart));
}

TEST(LiteralTest, ValuesAndText) {
  Literal l = Literal::FromDoubles(Shape::Array(DType::kF32, {2, 2}), {1, 2.5, -3, 4});
  EXPECT_EQ(l.GetDouble(1), 2.5);
  EXPECT_EQ(Literal::FromDoubles(Shape::Array(DType::kF32, {3}), {1, 2.5, -3}).ToString(),
            "{1, 2.5, -3}");
  EXPECT_EQ(Literal::Scalar(DType::kPred, 1).ToString(), "true");
  EXPECT_EQ(Literal::FromInts(Shape::Array(DType::kS32, {3}), {1, 2, 3}).GetInt(2), 3);
}

TEST(ComputationTest, ParametersAndPostOrder) {
  Computation c("c");
  Instruction* p1 = c.AddInstruction(
      std::make_unique<Instruction>("p1", Opcode::kParameter, Shape::Scalar(DType::kF32)));
  p1->mutable_attributes().parameter_number = 1;
  Instruction* p0 = c.AddInstruction(
      std::make_unique<Instruction>("p0", Opcode::kParameter, Shape::Scalar(DType::kF32)));
  p0->mutable_attributes().parameter_number = 0;
  auto add = std::make_unique<Instruction>("add", Opcode::kAdd, Shape::Scalar(DType::kF32));
  add->AppendOperand(p0);
  add->AppendOperand(p1);
  c.set_root(c.AddInstruction(std::move(add)));
  EXPECT_EQ(c.parameters(), (std::vector<Instruction*>{p0, p1}));
  EXPECT_EQ(c.ComputeProgramShape().ToString(), "(f32[], f32[])->f32[]");
  // Text order, which has operands first here.
  EXPECT_EQ(c.MakePostOrder(), (std::vector<Instruction*>{p1, p0, c.root()}));
  const InstructionIndex index(c);
  EXPECT_EQ(index.Find("p0"), p0);
  EXPECT_EQ(index.Find("add"), c.root());
  EXPECT_EQ(index.Find("p2"), nullptr);
}

// An instruction whose operands come later in the text is preceded by them, in operand order.
TEST(ComputationTest, PostOrderPlacesOperandsFirst) {
  Computation c("c");
  auto p0 = std::make_unique<Instruction>("p0", Opcode::kParameter, Shape::Scalar(DType::kF32));
  auto p1 = std::make_unique<Instruction>("p1", Opcode::kParameter, Shape::Scalar(DType::kF32));
  p1->mutable_attributes().parameter_number = 1;
  auto add = std::make_unique<Instruction>("add", Opcode::kAdd, Shape::Scalar(DType::kF32));
  add->AppendOperand(p0.get());
  add->AppendOperand(p1.get());
  auto negate =
      std::make_unique<Instruction>("negate", Opcode::kNegate, Shape::Scalar(DType::kF32));
  negate->AppendOperand(p1.get());
  Instruction* add_ptr = c.AddInstruction(std::move(add));
  Instruction* p1_ptr = c.AddInstruction(std::move(p1));
  Instruction* negate_ptr = c.AddInstruction(std::move(negate));
  Instruction* p0_ptr = c.AddInstruction(std::move(p0));
  c.set_root(negate_ptr);
  EXPECT_EQ(c.MakePostOrder(), (std::vector<Instruction*>{p0_ptr, p1_ptr, add_ptr, negate_ptr}));
}

TEST(ModuleTest, ComputationPostOrderPutsCalleesFirst) {
  Module m("m");
  Computation* callee = m.AddComputation(std::make_unique<Computation>("callee"));
  Computation* entry = m.AddComputation(std::make_unique<Computation>("entry"));
  auto call = std::make_unique<Instruction>("call", Opcode::kCall, Shape());
  call->AppendCalledComputation(callee);
  entry->set_root(entry->AddInstruction(std::move(call)));
  m.set_entry(entry);
  EXPECT_EQ(m.MakeComputationPostOrder(), (std::vector<Computation*>{callee, entry}));
  EXPECT_EQ(m.GetComputation("callee"), callee);
  EXPECT_EQ(m.instruction_count(), 1);
}

}  // namespace
}  // namespace alpa::ir
