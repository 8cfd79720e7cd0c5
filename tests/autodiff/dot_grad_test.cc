// Gradient checks of the dot rule over the dimension layouts models produce.
#include <gtest/gtest.h>

#include "gradient_check.h"

namespace alpa::autodiff::testing {
namespace {

using ir::ComputationBuilder;
using ir::Instruction;
using Params = std::vector<Instruction*>;

void CheckDot(ir::Shape lhs, ir::Shape rhs, ir::DotDimensionNumbers numbers) {
  std::unique_ptr<ir::Module> forward = WeightedSumLoss(
      {lhs, rhs},
      [&numbers](ComputationBuilder& b, const Params& p) { return b.Dot(p[0], p[1], numbers); });
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, {0, 1});
}

TEST(DotGradTest, MatMul) { CheckDot(F64({3, 4}), F64({4, 2}), {{}, {}, {1}, {0}}); }

TEST(DotGradTest, ContractingFirstOnBothSides) {
  // x^T w: [4,3] x [4,2] -> [3,2].
  CheckDot(F64({4, 3}), F64({4, 2}), {{}, {}, {0}, {0}});
}

TEST(DotGradTest, BatchedAttentionScores) {
  // q [b,h,s,d] . k [b,h,t,d] -> [b,h,s,t], contracting d.
  CheckDot(F64({2, 2, 3, 4}), F64({2, 2, 2, 4}), {{0, 1}, {0, 1}, {3}, {3}});
}

TEST(DotGradTest, BatchNotLeadingAndTwoContractingDimsInSwappedOrder) {
  // lhs [c0, b, f, c1], rhs [c1', g, b, c0']: batch (1 <-> 2), contracting (0 <-> 3, 3 <-> 0).
  CheckDot(F64({2, 3, 2, 4}), F64({4, 2, 3, 2}), {{1}, {2}, {0, 3}, {3, 0}});
}

TEST(DotGradTest, SeveralFreeDimensionsOnEachSide) {
  // [2,3,4] x [5,4,2] contracting 4: free dims (0,1) of lhs and (0,2) of rhs keep their order.
  CheckDot(F64({2, 3, 4}), F64({5, 4, 2}), {{}, {}, {2}, {1}});
}

TEST(DotGradTest, VectorDotVector) { CheckDot(F64({5}), F64({5}), {{}, {}, {0}, {0}}); }

}  // namespace
}  // namespace alpa::autodiff::testing
