// Gradient checks of the reduce-window rule: sum pooling (add reducer) and max pooling (max
// reducer) with strides, padding and, for sums, window dilation. Random inputs make ties in a
// max window unlikely, so finite differences see the same winner on both sides.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "autodiff/grad.h"
#include "gradient_check.h"

namespace alpa::autodiff::testing {
namespace {

using ir::ComputationBuilder;
using ir::Instruction;
using ir::Opcode;
using ir::WindowDim;
using ::testing::HasSubstr;
using Params = std::vector<Instruction*>;

// reduce-window(x, init) with `reducer`; init is parameter 1 when `init_is_parameter`, else the
// constant `init`.
std::unique_ptr<ir::Module> PoolLoss(ir::Shape input, std::vector<WindowDim> window, Opcode reducer,
                                     double init, bool init_is_parameter = false) {
  std::vector<ir::Shape> parameters = {input};
  if (init_is_parameter) parameters.push_back(F64({}));
  return WeightedSumLoss(parameters, [&](ComputationBuilder& b, const Params& p) {
    Instruction* v = init_is_parameter ? p[1] : b.ConstantScalar(ir::DType::kF64, init);
    return b.ReduceWindow({p[0]}, {v}, window,
                          b.module_builder().ScalarReducer(reducer, ir::DType::kF64));
  });
}

void CheckPool(ir::Shape input, std::vector<WindowDim> window, Opcode reducer, double init) {
  std::unique_ptr<ir::Module> forward = PoolLoss(input, window, reducer, init);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, {0});
}

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

TEST(WindowGradTest, SumPool1D) { CheckPool(F64({7}), {Window(3)}, Opcode::kAdd, 0); }

TEST(WindowGradTest, SumPool2DStrideTwo) {
  // NHWC 2x2 pooling with stride 2 over an odd width: the last column is in no window.
  CheckPool(F64({2, 6, 5, 2}), {Window(1), Window(2, 2), Window(2, 2), Window(1)}, Opcode::kAdd, 0);
}

TEST(WindowGradTest, SumPool2DStridePaddingOverlap) {
  // 3x3 windows, stride 2, padding 1 ("SAME" pooling): windows overlap and reach the padding.
  CheckPool(F64({1, 2, 7, 6}), {Window(1), Window(1), Window(3, 2, 1, 1), Window(3, 2, 1, 0)},
            Opcode::kAdd, 0);
}

TEST(WindowGradTest, SumPoolNegativePaddingAndDilation) {
  CheckPool(F64({9, 4}), {Window(3, 2, -1, 2, 2), Window(2, 1, 1, 1)}, Opcode::kAdd, 0);
}

TEST(WindowGradTest, SumPoolInitParameter) {
  // d init = sum of g: the init enters every output once.
  std::unique_ptr<ir::Module> forward =
      PoolLoss(F64({5, 4}), {Window(2, 2, 0, 1), Window(3, 1, 1, 1)}, Opcode::kAdd, 0, true);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, {0, 1});
}

TEST(WindowGradTest, MaxPool1D) { CheckPool(F64({8}), {Window(3)}, Opcode::kMaximum, kMinusInf); }

TEST(WindowGradTest, MaxPool2DStrideTwo) {
  CheckPool(F64({2, 6, 5, 2}), {Window(1), Window(2, 2), Window(2, 2), Window(1)}, Opcode::kMaximum,
            kMinusInf);
}

TEST(WindowGradTest, MaxPool2DStridePaddingOverlap) {
  // Overlapping 3x3 windows, stride 2, padding 1 (NCHW): one element may win several windows.
  CheckPool(F64({1, 2, 7, 6}), {Window(1), Window(1), Window(3, 2, 1, 1), Window(3, 2, 1, 0)},
            Opcode::kMaximum, kMinusInf);
}

TEST(WindowGradTest, MaxPoolWindowsEntirelyInPadding) {
  // High padding 3 with window 2, stride 2: the last window holds only padding, so y is the init
  // there and x gets none of its g (a finite init keeps the loss finite).
  CheckPool(F64({5}), {Window(2, 2, 0, 3)}, Opcode::kMaximum, -5.0);
}

TEST(WindowGradTest, MaxPoolFiniteInitParameter) {
  // A finite init in [-1, 1) beats every element of some windows: their g goes to the init.
  std::unique_ptr<ir::Module> forward =
      PoolLoss(F64({6, 5}), {Window(2, 2), Window(2, 1, 1, 0)}, Opcode::kMaximum, 0, true);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, {0, 1});
}

TEST(WindowGradTest, MinPoolIsUnimplemented) {
  std::unique_ptr<ir::Module> forward = PoolLoss(F64({6}), {Window(2)}, Opcode::kMinimum, 0);
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0});
  ASSERT_FALSE(gradient.ok());
  EXPECT_EQ(gradient.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(gradient.status().message(), HasSubstr("minimum reducer"));
}

TEST(WindowGradTest, BaseDilationIsUnimplemented) {
  WindowDim w = Window(2);
  w.lhs_dilation = 2;
  std::unique_ptr<ir::Module> forward = PoolLoss(F64({5}), {w}, Opcode::kAdd, 0);
  ASSERT_NE(forward, nullptr);
  EXPECT_THAT(Grad(*forward, {0}).status().message(), HasSubstr("base dilation 2"));
}

}  // namespace
}  // namespace alpa::autodiff::testing
