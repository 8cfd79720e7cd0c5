// Gradient checks of the convolution rule: 1-D and 2-D, strides (dividing the input evenly or
// not), padding (positive and negative), window dilation, and the NHWC and NCHW layouts. Both
// operands are checked against finite differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "gradient_check.h"

namespace alpa::autodiff::testing {
namespace {

using ir::ComputationBuilder;
using ir::ConvolutionDimensionNumbers;
using ir::Instruction;
using ir::WindowDim;
using ::testing::HasSubstr;
using Params = std::vector<Instruction*>;

// b0f_0io->b0f
ConvolutionDimensionNumbers Nwc() { return {0, 2, {1}, 1, 2, {0}, 0, 2, {1}}; }
// b01f_01io->b01f
ConvolutionDimensionNumbers Nhwc() { return {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}}; }
// bf01_oi01->bf01
ConvolutionDimensionNumbers Nchw() { return {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}}; }

std::unique_ptr<ir::Module> ConvLoss(ir::Shape input, ir::Shape kernel,
                                     std::vector<WindowDim> window,
                                     ConvolutionDimensionNumbers numbers,
                                     int64_t feature_group_count = 1) {
  return WeightedSumLoss({input, kernel}, [&](ComputationBuilder& b, const Params& p) {
    return b.Convolution(p[0], p[1], window, numbers, feature_group_count);
  });
}

void CheckConv(ir::Shape input, ir::Shape kernel, std::vector<WindowDim> window,
               ConvolutionDimensionNumbers numbers) {
  std::unique_ptr<ir::Module> forward = ConvLoss(input, kernel, window, numbers);
  ASSERT_NE(forward, nullptr);
  ExpectGradientMatchesFiniteDifferences(*forward, {0, 1});
}

TEST(ConvolutionGradTest, OneDimensional) {
  // x [2, 7, 3] (N, W, C_in), w [3, 3, 4] (W, C_in, C_out) -> [2, 5, 4].
  CheckConv(F64({2, 7, 3}), F64({3, 3, 4}), {Window(3)}, Nwc());
}

TEST(ConvolutionGradTest, OneDimensionalStrideTwoWithPadding) {
  // 8 + 1 + 0 padded, stride 2: 4 outputs; the last input is reached by one window only.
  CheckConv(F64({1, 8, 2}), F64({3, 2, 3}), {Window(3, 2, 1, 0)}, Nwc());
}

TEST(ConvolutionGradTest, OneDimensionalStrideLeavesInputUnreached) {
  // 9 inputs, size 2, stride 3: windows at 0, 3, 6; input 8 gets no gradient (negative high
  // padding in the kernel's transposed convolution).
  CheckConv(F64({2, 9, 2}), F64({2, 2, 2}), {Window(2, 3)}, Nwc());
}

TEST(ConvolutionGradTest, OneDimensionalNegativePadding) {
  CheckConv(F64({1, 7, 2}), F64({2, 2, 2}), {Window(2, 1, -1, 1)}, Nwc());
}

TEST(ConvolutionGradTest, OneDimensionalWindowDilation) {
  CheckConv(F64({2, 8, 2}), F64({3, 2, 3}), {Window(3, 1, 2, 1, 2)}, Nwc());
}

TEST(ConvolutionGradTest, OneDimensionalStrideAndDilation) {
  CheckConv(F64({1, 11, 2}), F64({3, 2, 2}), {Window(3, 2, 1, 2, 2)}, Nwc());
}

TEST(ConvolutionGradTest, Nhwc) {
  // x [2, 5, 4, 2], w [3, 2, 2, 3] -> [2, 3, 3, 3].
  CheckConv(F64({2, 5, 4, 2}), F64({3, 2, 2, 3}), {Window(3), Window(2)}, Nhwc());
}

TEST(ConvolutionGradTest, NhwcStrideTwoPaddingAndDilation) {
  CheckConv(F64({1, 6, 7, 2}), F64({3, 2, 2, 3}), {Window(3, 2, 1, 1), Window(2, 2, 0, 1, 2)},
            Nhwc());
}

TEST(ConvolutionGradTest, Nchw) {
  // x [2, 3, 5, 4], w [2, 3, 2, 3] (O, I, H, W) -> [2, 2, 4, 2].
  CheckConv(F64({2, 3, 5, 4}), F64({2, 3, 2, 3}), {Window(2), Window(3)}, Nchw());
}

TEST(ConvolutionGradTest, NchwStridePaddingAndDilation) {
  CheckConv(F64({1, 2, 7, 6}), F64({3, 2, 3, 2}), {Window(3, 2, 2, 1, 2), Window(2, 1, 1, 0)},
            Nchw());
}

TEST(ConvolutionGradTest, FeatureGroupsAreUnimplemented) {
  std::unique_ptr<ir::Module> forward =
      ConvLoss(F64({1, 5, 4}), F64({2, 2, 4}), {Window(2)}, Nwc(), /*feature_group_count=*/2);
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0, 1});
  ASSERT_FALSE(gradient.ok());
  EXPECT_EQ(gradient.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(gradient.status().message(), HasSubstr("feature_group_count=2"));
}

TEST(ConvolutionGradTest, LhsDilationIsUnimplemented) {
  WindowDim w = Window(2);
  w.lhs_dilation = 2;
  std::unique_ptr<ir::Module> forward = ConvLoss(F64({1, 5, 2}), F64({2, 2, 2}), {w}, Nwc());
  ASSERT_NE(forward, nullptr);
  Result<std::unique_ptr<ir::Module>> gradient = Grad(*forward, {0, 1});
  ASSERT_FALSE(gradient.ok());
  EXPECT_THAT(gradient.status().message(), HasSubstr("lhs_dilate=2"));
}

}  // namespace
}  // namespace alpa::autodiff::testing
