// The builder API: a 2-layer MLP forward, naming, reducers and error reporting.
#include "ir/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/verifier.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

// dense(x) = x . w + broadcast(b), as a model would build it.
Instruction* Dense(ComputationBuilder& b, Instruction* x, Instruction* w, Instruction* bias) {
  Instruction* y = b.MatMul(x, w);
  return b.Add(y, b.Broadcast(bias, y->shape().dims(), {1}));
}

TEST(BuilderTest, TwoLayerMlpForward) {
  ModuleBuilder mb("mlp");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({32, 784}), "x");
  Instruction* w1 = b.Parameter(1, F32({784, 128}), "w1");
  Instruction* b1 = b.Parameter(2, F32({128}), "b1");
  Instruction* w2 = b.Parameter(3, F32({128, 10}), "w2");
  Instruction* b2 = b.Parameter(4, F32({10}), "b2");

  Instruction* h = Dense(b, x, w1, b1);
  Instruction* zero = b.ConstantScalar(DType::kF32, 0);
  Instruction* relu = b.Maximum(h, b.Broadcast(zero, {32, 128}, {}));
  Instruction* logits = Dense(b, relu, w2, b2);
  Instruction* loss = b.Reduce(b.Multiply(logits, logits), zero, {0, 1},
                               mb.ScalarReducer(Opcode::kAdd, DType::kF32));
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();

  EXPECT_EQ(h->shape().ToString(), "f32[32,128]");
  EXPECT_EQ(relu->shape().ToString(), "f32[32,128]");
  EXPECT_EQ(logits->shape().ToString(), "f32[32,10]");
  EXPECT_EQ(loss->shape().ToString(), "f32[]");
  EXPECT_EQ(logits->operand(0)->opcode(), Opcode::kDot);
  EXPECT_EQ(logits->operand(0)->name(), "dot.2");

  Result<Computation*> main = b.Build(b.Tuple({loss, logits}));
  ASSERT_TRUE(main.ok()) << main.status().ToString();
  EXPECT_EQ((*main)->root()->shape().ToString(), "(f32[], f32[32,10])");
  EXPECT_EQ((*main)->parameter_count(), 5);
  Result<std::unique_ptr<Module>> module = mb.Build(*main);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_TRUE(VerifyModule(**module).ok());
  EXPECT_EQ((*module)->computations().size(), 2u);  // add.f32 and main
  EXPECT_EQ((*module)->entry()->name(), "main");
}

TEST(BuilderTest, ScalarReducersAreSharedPerOpcodeAndType) {
  ModuleBuilder mb("m");
  Computation* add = mb.ScalarReducer(Opcode::kAdd, DType::kF32);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name(), "add.f32");
  EXPECT_EQ(add->ComputeProgramShape().ToString(), "(f32[], f32[])->f32[]");
  EXPECT_EQ(mb.ScalarReducer(Opcode::kAdd, DType::kF32), add);
  EXPECT_NE(mb.ScalarReducer(Opcode::kMaximum, DType::kF32), add);
  EXPECT_EQ(mb.ScalarReducer(Opcode::kAnd, DType::kF32), nullptr);  // and needs pred/integers
  EXPECT_EQ(mb.ScalarReducer(Opcode::kNegate, DType::kF32), nullptr);
}

TEST(BuilderTest, SumWidensSixteenBitFloatsToF32AndNothingElse) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* half = b.Parameter(0, Shape::Array(DType::kBF16, {8, 16}), "half");
  Instruction* ints = b.Parameter(1, Shape::Array(DType::kS32, {8, 16}), "ints");

  Instruction* half_sum = b.Sum(half, {1});
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(half_sum->shape().ToString(), "bf16[8]");
  ASSERT_EQ(half_sum->opcode(), Opcode::kConvert);
  const Instruction* reduce = half_sum->operand(0);
  ASSERT_EQ(reduce->opcode(), Opcode::kReduce);
  EXPECT_EQ(reduce->shape().ToString(), "f32[8]");
  EXPECT_EQ(reduce->called_computations()[0], mb.ScalarReducer(Opcode::kAdd, DType::kF32));
  EXPECT_EQ(reduce->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(reduce->operand(0)->operand(0), half);

  Instruction* int_sum = b.Sum(ints, {0, 1});
  ASSERT_EQ(int_sum->opcode(), Opcode::kReduce);
  EXPECT_EQ(int_sum->shape().ToString(), "s32[]");
  EXPECT_EQ(int_sum->operand(0), ints);

  EXPECT_EQ(b.Sum(nullptr, {0}), nullptr);
  EXPECT_THAT(b.status().ToString(), HasSubstr("operand 0 of reduce is null"));
}

TEST(BuilderTest, GeneratedNamesAreUniqueAndGivenNamesAreKept) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({2}), "x");
  EXPECT_EQ(b.Negate(x)->name(), "negate.1");
  EXPECT_EQ(b.Negate(x)->name(), "negate.2");
  EXPECT_EQ(b.AddInstruction(Opcode::kNegate, {x}, {}, {}, Shape(), "negate.3")->name(),
            "negate.3");
  EXPECT_EQ(b.Negate(x)->name(), "negate.4");  // skips the given name
  EXPECT_EQ(b.Parameter(1, F32({2}), "x"), nullptr);
  EXPECT_EQ(b.status().message(), "computation %main: instruction name %x is already used");
}

TEST(BuilderTest, FirstErrorIsKeptAndReportedByBuild) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({2, 3}), "x");
  Instruction* bad = b.Transpose(x, {0});
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(b.Negate(bad), nullptr);  // chained calls pass the failure along
  EXPECT_EQ(b.Reshape(x, {6}), nullptr);
  Result<Computation*> built = b.Build(x);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().message(),
            "computation %main: transpose %transpose.1: dimensions {0} "
            "is not a permutation of the operand's 2 dims");
  EXPECT_TRUE(mb.module()->computations().empty());
}

TEST(BuilderTest, BuildChecksTheComputation) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(1, F32({2}), "x");
  Result<Computation*> built = b.Build(x);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().message(),
            "computation %main: parameter %x has number 1 but the "
            "computation has 1 parameter(s), numbered 0..0");
  EXPECT_FALSE(b.Build(x).ok());
}

TEST(BuilderTest, OperandsFromAnotherComputationAreRejected) {
  ModuleBuilder mb("m");
  ComputationBuilder other = mb.NewComputation("other");
  Instruction* y = other.Parameter(0, F32({2}), "y");
  ComputationBuilder b = mb.NewComputation("main");
  EXPECT_EQ(b.Negate(y), nullptr);
  EXPECT_EQ(b.status().message(),
            "computation %main: operand 0 (%y) of negate belongs to another computation");
}

TEST(BuilderTest, ModuleBuildRequiresAnEntryAndVerifies) {
  ModuleBuilder mb("m");
  Result<std::unique_ptr<Module>> none = mb.Build(nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "module m: the entry computation is null");
}

}  // namespace
}  // namespace alpa::ir
