// Hand-computed convolutions, one per feature of XLA's definition, and parameter validation.
#include "kernels/convolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "test_util.h"

namespace alpa::kernels {
namespace {

using ir::DType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeParams;
using testing::OutputSpatial;

// Runs f32 Convolution and returns the output (sized from the params).
std::vector<float> RunF32(const ConvolutionParams& p, const std::vector<float>& input,
                          const std::vector<float>& kernel) {
  int64_t count = (p.batch / p.batch_group_count) * p.output_features;
  for (int64_t size : p.output_spatial) count *= size;
  std::vector<float> output(static_cast<size_t>(count), -999.0f);
  Status status = Convolution(DType::kF32, p, input.data(), kernel.data(), output.data());
  EXPECT_TRUE(status.ok()) << status.ToString();
  return output;
}

TEST(ConvolutionTest, OneDimensionalStrideAndPadding) {
  // padded = [0 1 2 3 4 5 0]; windows at 0, 2, 4 with kernel [1 0 -1]: [-2, -2, 4].
  ConvolutionParams p = MakeParams(1, 1, 1, {5}, {3});
  p.strides = {2};
  p.pad_low = {1};
  p.pad_high = {1};
  p.output_spatial = OutputSpatial(p);
  ASSERT_THAT(p.output_spatial, ElementsAre(3));
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kOneDnn);
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4, 5}, {1, 0, -1}), ElementsAre(-2, -2, 4));
}

TEST(ConvolutionTest, TwoDimensionalSumsTheWindow) {
  // Input 2x3 [[1 2 3] [4 5 6]], kernel 2x2 [[1 2] [3 4]]: [1+4+12+20, 2+6+15+24] = [37, 47].
  ConvolutionParams p = MakeParams(1, 1, 1, {2, 3}, {2, 2});
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4}), ElementsAre(37, 47));
}

TEST(ConvolutionTest, FeatureGroups) {
  // Two groups of one channel: channel 0 [1 2] scaled by 10, channel 1 [3 4] by 100.
  ConvolutionParams p = MakeParams(1, 2, 2, {2}, {1});
  p.feature_group_count = 2;
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kOneDnn);
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4}, {10, 100}), ElementsAre(10, 20, 300, 400));
}

TEST(ConvolutionTest, FeatureGroupsWithSeveralChannelsPerGroup) {
  // C_in 4, C_out 2, G 2: out 0 = 1*x0 + 2*x1, out 1 = 3*x2 + 4*x3 (x_c = c + 1, one position).
  ConvolutionParams p = MakeParams(1, 4, 2, {1}, {1});
  p.feature_group_count = 2;
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4}, {1, 2, 3, 4}), ElementsAre(1 + 4, 9 + 16));
}

TEST(ConvolutionTest, BatchGroups) {
  // N 2, B 2: output feature 0 sees batch 0 ([1 2] * 10), output feature 1 batch 1 ([3 4] * 100).
  ConvolutionParams p = MakeParams(2, 1, 2, {2}, {1});
  p.batch_group_count = 2;
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kReference);
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4}, {10, 100}), ElementsAre(10, 20, 300, 400));
}

TEST(ConvolutionTest, BatchGroupsSplitBatchAndFeaturesIntoContiguousBlocks) {
  // N 4, B 2, C_out 4, no spatial dims: out[n][f] = in[(f / 2) * 2 + n] * kernel[f].
  ConvolutionParams p = MakeParams(4, 1, 4, {}, {});
  p.batch_group_count = 2;
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4}, {1, 10, 100, 1000}),
              ElementsAre(1, 10, 300, 3000, 2, 20, 400, 4000));
}

TEST(ConvolutionTest, RhsDilation) {
  // Kernel [1 1] with dilation 2 spans 3: [1+3, 2+4, 3+5].
  ConvolutionParams p = MakeParams(1, 1, 1, {5}, {2});
  p.rhs_dilation = {2};
  p.output_spatial = OutputSpatial(p);
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kOneDnn);
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4, 5}, {1, 1}), ElementsAre(4, 6, 8));
}

TEST(ConvolutionTest, LhsDilation) {
  // [1 2 3] dilated by 2 is [1 0 2 0 3]; kernel [1 1]: [1, 2, 2, 3].
  ConvolutionParams p = MakeParams(1, 1, 1, {3}, {2});
  p.lhs_dilation = {2};
  p.output_spatial = OutputSpatial(p);
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kReference);
  EXPECT_THAT(RunF32(p, {1, 2, 3}, {1, 1}), ElementsAre(1, 2, 2, 3));
}

TEST(ConvolutionTest, NegativePaddingCrops) {
  // [1 2 3 4 5] cropped by one on each side is [2 3 4]; kernel [1 1]: [5, 7].
  ConvolutionParams p = MakeParams(1, 1, 1, {5}, {2});
  p.pad_low = {-1};
  p.pad_high = {-1};
  p.output_spatial = OutputSpatial(p);
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kReference);
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4, 5}, {1, 1}), ElementsAre(5, 7));
}

TEST(ConvolutionTest, WindowReversal) {
  // Kernel [1 10] reversed is [10 1]: [1*10 + 2, 2*10 + 3].
  ConvolutionParams p = MakeParams(1, 1, 1, {3}, {2});
  p.window_reversal = {true};
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kReference);
  EXPECT_THAT(RunF32(p, {1, 2, 3}, {1, 10}), ElementsAre(12, 23));
}

TEST(ConvolutionTest, NoSpatialDimensionsIsAMatMul) {
  // N 2, C_in 2, C_out 1: out[n] = x[n, 0] * 3 + x[n, 1] * 5.
  ConvolutionParams p = MakeParams(2, 2, 1, {}, {});
  EXPECT_THAT(RunF32(p, {1, 2, 3, 4}, {3, 5}), ElementsAre(13, 29));
}

TEST(ConvolutionTest, EmptyReductionWritesZeros) {
  // No input features: every output is the empty sum.
  ConvolutionParams p = MakeParams(2, 0, 3, {4}, {2});
  EXPECT_EQ(SelectConvolutionPath(DType::kF32, p), ConvolutionPath::kReference);
  std::vector<float> output = RunF32(p, {}, {});
  EXPECT_EQ(output.size(), 2u * 3 * 3);
  EXPECT_THAT(output, ::testing::Each(0.0f));
}

TEST(ConvolutionTest, IntegerConvolutionWraps) {
  // s8: 100 + 100 = 200 wraps to -56.
  ConvolutionParams p = MakeParams(1, 1, 1, {2}, {2});
  const std::vector<int8_t> input = {100, 100}, kernel = {1, 1};
  int8_t output = 0;
  ASSERT_TRUE(Convolution(DType::kS8, p, input.data(), kernel.data(), &output).ok());
  EXPECT_EQ(output, -56);
}

TEST(ConvolutionTest, RejectsInconsistentParameters) {
  const std::vector<float> buffer(64, 1.0f);
  std::vector<float> out(64);
  ConvolutionParams p = MakeParams(1, 1, 1, {5}, {3});
  p.output_spatial = {4};
  Status status = Convolution(DType::kF32, p, buffer.data(), buffer.data(), out.data());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("has size 4 but the window gives 3"));

  p = MakeParams(1, 3, 2, {5}, {3});
  p.feature_group_count = 2;
  EXPECT_THAT(ValidateConvolutionParams(p).message(), HasSubstr("multiples of"));

  p = MakeParams(1, 1, 1, {5}, {3});
  p.strides = {0};
  EXPECT_EQ(ValidateConvolutionParams(p).code(), StatusCode::kInvalidArgument);

  p = MakeParams(1, 1, 1, {5}, {3});
  p.pad_low = {-4};
  p.pad_high = {-2};
  EXPECT_THAT(ValidateConvolutionParams(p).message(), HasSubstr("negative size"));

  p = MakeParams(1, 1, 1, {5}, {3});
  p.rhs_dilation = {};
  EXPECT_THAT(ValidateConvolutionParams(p).message(), HasSubstr("rhs_dilation has 0 entries"));

  p = MakeParams(1, 1, 1, {5}, {3});
  EXPECT_EQ(Convolution(DType::kPred, p, buffer.data(), buffer.data(), out.data()).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(Convolution(DType::kF32, p, nullptr, buffer.data(), out.data()).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace alpa::kernels
