// Which values the CPU runtime computes inside their readers' loops (ir/loop_fusion.h).
#include "ir/loop_fusion.h"

#include <gtest/gtest.h>

#include "ir/builder.h"

namespace alpa::ir {
namespace {

using Values = std::unordered_set<const Instruction*>;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

struct Program {
  ModuleBuilder mb{"m"};
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({8, 64}), "x");
  Instruction* y = b.Parameter(1, F32({8, 64}), "y");

  Values Fused(Instruction* root) {
    Result<Computation*> built = b.Build(root);
    EXPECT_TRUE(built.ok()) << built.status().message();
    return built.ok() ? LoopFusedValues(**built) : Values{};
  }
};

TEST(LoopFusionTest, AChainOfElementwiseOpsFusesIntoItsLastOp) {
  Program p;
  // An Adam-like update: p - lr * m / (sqrt(v) + eps), the scalars broadcast.
  Instruction* lr = p.b.Broadcast(p.b.ConstantScalar(DType::kF32, 0.1), {8, 64}, {});
  Instruction* eps = p.b.Broadcast(p.b.ConstantScalar(DType::kF32, 1e-8), {8, 64}, {});
  Instruction* root_of_v = p.b.Sqrt(p.y);
  Instruction* denominator = p.b.Add(root_of_v, eps);
  Instruction* direction = p.b.Divide(p.x, denominator);
  Instruction* step = p.b.Multiply(lr, direction);
  Instruction* next = p.b.Subtract(p.x, step);
  EXPECT_EQ(p.Fused(next), (Values{root_of_v, denominator, direction, step}));
  EXPECT_TRUE(IsLoopOp(*next));
}

TEST(LoopFusionTest, AValueWithTwoReadersOrTheRootIsMaterialised) {
  Program p;
  Instruction* shared = p.b.Exp(p.x);              // read by two ops
  Instruction* doubled = p.b.Add(shared, shared);  // one reader reading it twice
  Instruction* product = p.b.Multiply(doubled, shared);
  Instruction* tail = p.b.Negate(product);
  EXPECT_EQ(p.Fused(p.b.Tuple({tail, shared})), (Values{doubled, product}));
}

TEST(LoopFusionTest, ReadersThatAreNotLoopOpsKeepTheirOperands) {
  Program p;
  Instruction* sum = p.b.Add(p.x, p.y);
  EXPECT_TRUE(p.Fused(p.b.Sum(sum, {1})).empty());
}

TEST(LoopFusionTest, LoopsReadBroadcastsOfArraysOtherTypesStayOut) {
  {
    Program p;  // a column broadcast read in place, inside the loop
    Instruction* bias = p.b.Broadcast(p.b.Parameter(2, F32({64}), "bias"), {8, 64}, {1});
    Instruction* scaled = p.b.Exp(p.x);
    EXPECT_EQ(p.Fused(p.b.Add(scaled, bias)), (Values{scaled}));
  }
  {
    ModuleBuilder mb("m");  // s32 arithmetic has no loop kernel
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* i = b.Parameter(0, Shape::Array(DType::kS32, {64}), "i");
    Result<Computation*> built = b.Build(b.Add(b.Multiply(i, i), i));
    ASSERT_TRUE(built.ok()) << built.status().message();
    EXPECT_TRUE(LoopFusedValues(**built).empty());
  }
  {
    ModuleBuilder mb("m");  // bf16 fuses like f32
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* h = b.Parameter(0, Shape::Array(DType::kBF16, {64}), "h");
    Instruction* squared = b.Multiply(h, h);
    Result<Computation*> built = b.Build(b.Power(squared, h));
    ASSERT_TRUE(built.ok()) << built.status().message();
    EXPECT_EQ(LoopFusedValues(**built), (Values{squared}));
  }
}

// A masked, scaled and shifted softmax numerator in bf16, widened to f32 as the zoo's attention
// does: every op joins one loop reading the scores, the mask and the row maxima; and a compare
// joins the select that reads it.
TEST(LoopFusionTest, ComparesSelectsAndConvertsJoinLoops) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  const Shape scores_shape = Shape::Array(DType::kBF16, {8, 64});
  Instruction* scores = b.Parameter(0, scores_shape, "scores");
  Instruction* mask =
      b.Broadcast(b.Parameter(1, Shape::Array(DType::kPred, {64}), "mask"), {8, 64}, {1});
  Instruction* maxima =
      b.Broadcast(b.Parameter(2, Shape::Array(DType::kBF16, {8}), "maxima"), {8, 64}, {0});
  Instruction* scale = b.Broadcast(b.ConstantScalar(DType::kBF16, 0.125), {8, 64}, {});
  Instruction* low = b.Broadcast(b.ConstantScalar(DType::kBF16, -1e4), {8, 64}, {});
  Instruction* scaled = b.Multiply(scores, scale);
  Instruction* masked = b.Select(mask, scaled, low);
  Instruction* shifted = b.Subtract(masked, maxima);
  Instruction* e = b.Exp(shifted);
  Instruction* widened = b.Convert(e, DType::kF32);
  Instruction* x = b.Parameter(3, F32({8, 64}), "x");
  Instruction* y = b.Parameter(4, F32({8, 64}), "y");
  Instruction* greater = b.Compare(x, y, ComparisonDirection::kGt);
  Instruction* larger = b.Select(greater, x, y);
  Result<Computation*> built = b.Build(b.Tuple({widened, larger}));
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(LoopFusedValues(**built), (Values{scaled, masked, shifted, e, greater}));
  EXPECT_TRUE(IsLoopOp(*widened));
  EXPECT_TRUE(IsLoopOp(*greater));
}

// A loop runs at its root's step, keeping its inputs until then. Here p and q die at v, and w
// is computed between v and its reader r: fused, v would hold p and q (two buffers) across w's
// step where v alone held one, so v stays out. A negate of p alone swaps v's buffer for p's.
TEST(LoopFusionTest, AValueStaysOutOfALoopThatWouldHoldMoreMemory) {
  Program p;
  Instruction* t = p.b.Parameter(2, F32({8, 64}), "t");
  Instruction* v = p.b.Multiply(p.x, p.y);
  Instruction* w = p.b.Transpose(p.b.Transpose(t, {1, 0}), {1, 0});  // allocates after v
  EXPECT_TRUE(p.Fused(p.b.Add(v, w)).empty());

  Program q;
  Instruction* negated = q.b.Negate(q.x);
  Instruction* later = q.b.Transpose(q.b.Transpose(q.y, {1, 0}), {1, 0});
  EXPECT_EQ(q.Fused(q.b.Add(negated, later)), (Values{negated}));
}

}  // namespace
}  // namespace alpa::ir
