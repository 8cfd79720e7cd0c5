// Which broadcasts the runtime reads in place (ir/broadcast_folding.h), and at which strides.
#include "ir/broadcast_folding.h"

#include <gtest/gtest.h>

#include "ir/builder.h"

namespace alpa::ir {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

// x f32[8,64], bias f32[64]: y = x + broadcast(bias).
struct BiasAdd {
  ModuleBuilder mb{"m"};
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({8, 64}), "x");
  Instruction* bias = b.Parameter(1, F32({64}), "bias");
  Instruction* spread = b.Broadcast(bias, {8, 64}, {1});
};

TEST(BroadcastFoldingTest, ABroadcastEveryUserOfWhichIsALoopOpIsReadInPlace) {
  BiasAdd m;
  Instruction* sum = m.b.Add(m.x, m.spread);
  Instruction* product = m.b.Multiply(m.spread, sum);
  Instruction* positive = m.b.Compare(m.spread, product, ComparisonDirection::kGt);
  Instruction* chosen = m.b.Select(positive, m.b.Negate(m.spread), product);
  Result<Computation*> built = m.b.Build(m.b.Convert(chosen, DType::kBF16));
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(BroadcastsReadInPlace(**built), (std::unordered_set<const Instruction*>{m.spread}));
  EXPECT_EQ(BroadcastReadStrides(*m.spread), (std::vector<int64_t>{0, 1}));
}

TEST(BroadcastFoldingTest, OneUserThatIsNoLoopOpKeepsTheBroadcast) {
  BiasAdd m;
  Instruction* sum = m.b.Add(m.x, m.spread);
  Result<Computation*> built = m.b.Build(m.b.Add(sum, m.b.Transpose(m.spread, {0, 1})));
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_TRUE(BroadcastsReadInPlace(**built).empty());
}

TEST(BroadcastFoldingTest, RootsTransposesShortRowsAndOtherTypesAreMaterialised) {
  {
    BiasAdd m;  // the root is the program's output
    ASSERT_TRUE(m.b.Build(m.spread).ok());
    EXPECT_TRUE(BroadcastsReadInPlace(*m.spread->parent()).empty());
  }
  {
    ModuleBuilder mb("m");
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* x = b.Parameter(0, F32({64, 32}), "x");
    Instruction* square = b.Parameter(1, F32({32, 64}), "y");
    Instruction* transposed = b.Broadcast(x, {32, 64}, {1, 0});  // a transpose in disguise
    Instruction* column = b.Broadcast(b.Parameter(2, F32({32}), "c"), {32, 8}, {0});  // rows of 8
    Instruction* wide = b.Parameter(3, F32({32, 8}), "w");
    ASSERT_TRUE(b.Build(b.Tuple({b.Add(square, transposed), b.Add(wide, column)})).ok());
    EXPECT_TRUE(BroadcastsReadInPlace(*x->parent()).empty());
  }
  {
    ModuleBuilder mb("m");
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* x = b.Parameter(0, Shape::Array(DType::kF64, {4, 64}), "x");
    Instruction* spread = b.Broadcast(b.ConstantScalar(DType::kF64, 2), {4, 64}, {});
    ASSERT_TRUE(b.Build(b.Multiply(x, spread)).ok());
    EXPECT_TRUE(BroadcastsReadInPlace(*x->parent()).empty());
  }
}

// f16 and bf16 arithmetic reads its broadcasts in place too (their loops widen each tile).
TEST(BroadcastFoldingTest, SixteenBitArithmeticReadsItsBroadcastsInPlace) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    ModuleBuilder mb("m");
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* x = b.Parameter(0, Shape::Array(dtype, {8, 64}), "x");
    Instruction* bias = b.Parameter(1, Shape::Array(dtype, {64}), "bias");
    Instruction* spread = b.Broadcast(bias, {8, 64}, {1});
    Instruction* sum = b.Add(x, spread);
    ASSERT_TRUE(b.Build(sum).ok());
    EXPECT_EQ(BroadcastsReadInPlace(*x->parent()), (std::unordered_set<const Instruction*>{spread}))
        << DTypeName(dtype);
  }
}

// A scalar repeats everywhere, whatever the row length; a row statistic repeats along the minor
// dimension.
TEST(BroadcastFoldingTest, ScalarsAndRowStatisticsRepeat) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({3, 5, 4}), "x");
  Instruction* scalar = b.Broadcast(b.ConstantScalar(DType::kF32, 2), {3, 5, 4}, {});
  Instruction* rows = b.Broadcast(b.Parameter(1, F32({3, 5}), "r"), {3, 5, 4}, {0, 1});
  ASSERT_TRUE(b.Build(b.Subtract(b.Multiply(x, scalar), rows)).ok());
  EXPECT_EQ(BroadcastsReadInPlace(*x->parent()),
            (std::unordered_set<const Instruction*>{scalar}));  // rows of 4: too short
  EXPECT_EQ(BroadcastReadStrides(*scalar), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(BroadcastReadStrides(*rows), (std::vector<int64_t>{5, 1, 0}));
}

}  // namespace
}  // namespace alpa::ir
