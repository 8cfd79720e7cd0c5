// Gradient checks of the indexing rules (vjp_indexing.cc): pad, reverse, dynamic-slice,
// dynamic-update-slice, reduce max/min, gather, scatter-add. Index operands are constants: the
// check perturbs every parameter, and an index has no gradient.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "gradient_check.h"

namespace alpa::autodiff::testing {
namespace {

using ir::ComputationBuilder;
using ir::Instruction;
using ir::Opcode;
using Params = std::vector<Instruction*>;
using ::testing::HasSubstr;

Instruction* Indices(ComputationBuilder& b, std::vector<int64_t> dims,
                     const std::vector<int64_t>& values) {
  return b.Constant(ir::Literal::FromInts(ir::Shape::Array(ir::DType::kS32, dims), values));
}

Instruction* Index(ComputationBuilder& b, int64_t value) { return Indices(b, {}, {value}); }

void Check(const std::vector<ir::Shape>& shapes, const BodyFn& body, std::vector<int64_t> wrt) {
  std::unique_ptr<ir::Module> forward = WeightedSumLoss(shapes, body);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, wrt);
}

TEST(IndexingGradTest, PadWithInteriorAndNegativeEdges) {
  // Dim 1: interior 2 spreads x to 10 elements; low -1 crops x[:, 0] away (no gradient) and
  // high -2 the trailing padding. The padding value gets every other element's cotangent.
  Check({F64({3, 4}), F64({})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Pad(p[0], p[1], {{1, 2, 1}, {-1, -2, 2}});
        },
        {0, 1});
}

TEST(IndexingGradTest, PadCroppingBothEnds) {
  Check({F64({5, 2}), F64({})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Pad(p[0], p[1], {{-2, -1, 0}, {0, 3, 0}});
        },
        {0, 1});
}

TEST(IndexingGradTest, Reverse) {
  Check({F64({3, 4})}, [](ComputationBuilder& b, const Params& p) { return b.Reverse(p[0], {1}); },
        {0});
  Check({F64({3, 4})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Reverse(p[0], {0, 1});
        },
        {0});
}

TEST(IndexingGradTest, DynamicSliceWithAClampedStart) {
  // Start 3 in dim 1 of size 4 with size 2 clamps to 2.
  Check({F64({5, 4})},
        [](ComputationBuilder& b, const Params& p) {
          return b.DynamicSlice(p[0], {Index(b, 1), Index(b, 3)}, {3, 2});
        },
        {0});
}

TEST(IndexingGradTest, DynamicUpdateSliceWithAClampedStart) {
  // Start 4 in dim 0 of size 5 with an update of 2 rows clamps to 3.
  Check({F64({5, 4}), F64({2, 3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.DynamicUpdateSlice(p[0], p[1], {Index(b, 4), Index(b, 1)});
        },
        {0, 1});
}

TEST(IndexingGradTest, ReduceMaxAndMin) {
  Check({F64({3, 4})},
        [](ComputationBuilder& b, const Params& p) {
          ir::ModuleBuilder& mb = b.module_builder();
          Instruction* max = b.Reduce(p[0], b.ConstantScalar(ir::DType::kF64, -10), {1},
                                      mb.ScalarReducer(Opcode::kMaximum, ir::DType::kF64));
          Instruction* min = b.Reduce(p[0], b.ConstantScalar(ir::DType::kF64, 10), {0},
                                      mb.ScalarReducer(Opcode::kMinimum, ir::DType::kF64));
          // [3] and [4] side by side.
          return b.Concatenate({max, min}, 0);
        },
        {0});
}

TEST(IndexingGradTest, ReduceMaxTiesShareTheCotangent) {
  // max over two copies of x is x, so dx = g: each tie gets g / 2 and the copies add up. Giving
  // each tie the full g would double it.
  Check({F64({3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Reduce(b.Broadcast(p[0], {2, 3}, {1}), b.ConstantScalar(ir::DType::kF64, -10),
                          {0}, b.module_builder().ScalarReducer(Opcode::kMaximum, ir::DType::kF64));
        },
        {0});
}

TEST(IndexingGradTest, ReduceMaxWhoseResultIsTheInitGivesZero) {
  // init 10 beats every x in [-1, 1): y does not depend on x, dx = 0 (not NaN).
  Check({F64({2, 3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Add(
              b.Reduce(p[0], b.ConstantScalar(ir::DType::kF64, 10), {1},
                       b.module_builder().ScalarReducer(Opcode::kMaximum, ir::DType::kF64)),
              b.Reduce(p[0], b.ConstantScalar(ir::DType::kF64, 0), {1},
                       b.module_builder().ScalarReducer(Opcode::kAdd, ir::DType::kF64)));
        },
        {0});
}

TEST(IndexingGradTest, EmbeddingLookupWithRepeatedRows) {
  // Rows 1 and 3 are read twice: their gradients are the sums of two rows of g.
  Check(
      {F64({5, 3})},
      [](ComputationBuilder& b, const Params& p) {
        return b.Gather(p[0], Indices(b, {5}, {1, 3, 1, 4, 3}), {{1}, {0}, {0}, 1, {}, {}}, {1, 3});
      },
      {0});
}

TEST(IndexingGradTest, GatherWindowsWithClampedStarts) {
  // [2, 3] windows of a [4, 5] operand at (1, 2), (3, 4) -> clamped to (2, 2), and (-1, 0) ->
  // (0, 0): the gradient goes where the gather read.
  Check({F64({4, 5})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Gather(p[0], Indices(b, {3, 2}, {1, 2, 3, 4, -1, 0}),
                          {{1, 2}, {}, {0, 1}, 1, {}, {}}, {2, 3});
        },
        {0});
}

TEST(IndexingGradTest, GatherWithBatchingDims) {
  // Per batch element i of x [2, 4, 3], three rows x[i, idx[i, j], :]; the index vector is the
  // implicit trailing dim of indices [2, 3].
  Check({F64({2, 4, 3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Gather(p[0], Indices(b, {2, 3}, {0, 3, 3, 2, 1, 2}),
                          {{2}, {1}, {1}, 2, {0}, {0}}, {1, 1, 3});
        },
        {0});
}

TEST(IndexingGradTest, ScatterAddWithRepeatedAndOutOfBoundsIndices) {
  // Rows 1 (twice) and 4 of the operand get updates; 7 and -1 are out of bounds, so scatter drops
  // those update rows and they get no gradient.
  Check({F64({5, 3}), F64({5, 3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Scatter({p[0]}, Indices(b, {5}, {1, 7, 1, 4, -1}), {p[1]},
                           {{1}, {0}, {0}, 1, {}, {}},
                           b.module_builder().ScalarReducer(Opcode::kAdd, ir::DType::kF64));
        },
        {0, 1});
}

TEST(IndexingGradTest, ScatterAddWindowsWithBatchingDims) {
  // Per batch element i of operand [2, 4, 3], updates [2, 2, 3] add to rows idx[i, j].
  Check({F64({2, 4, 3}), F64({2, 2, 3})},
        [](ComputationBuilder& b, const Params& p) {
          return b.Scatter({p[0]}, Indices(b, {2, 2}, {3, 3, 0, 2}), {p[1]},
                           {{2}, {1}, {1}, 2, {0}, {0}},
                           b.module_builder().ScalarReducer(Opcode::kAdd, ir::DType::kF64));
        },
        {0, 1});
}

TEST(IndexingGradTest, ScatterWithAnotherCombinerIsUnimplemented) {
  std::unique_ptr<ir::Module> forward =
      WeightedSumLoss({F64({5, 3}), F64({2, 3})}, [](ComputationBuilder& b, const Params& p) {
        return b.Scatter({p[0]}, Indices(b, {2}, {1, 3}), {p[1]}, {{1}, {0}, {0}, 1, {}, {}},
                         b.module_builder().ScalarReducer(Opcode::kMaximum, ir::DType::kF64));
      });
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0, 1});
  ASSERT_FALSE(gradient.ok());
  EXPECT_THAT(gradient.status().message(), HasSubstr("scatter with a maximum combiner"));
}

}  // namespace
}  // namespace alpa::autodiff::testing
