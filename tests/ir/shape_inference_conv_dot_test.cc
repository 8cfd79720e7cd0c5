// Shape rules of dot and convolution (shape_inference_conv_dot.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using ConvDotShapeTest = IrTest;

DotDimensionNumbers DotDims(std::vector<int64_t> lb, std::vector<int64_t> rb,
                            std::vector<int64_t> lc, std::vector<int64_t> rc) {
  return DotDimensionNumbers{std::move(lb), std::move(rb), std::move(lc), std::move(rc)};
}

TEST_F(ConvDotShapeTest, MatMul) {
  EXPECT_EQ(S(b_.MatMul(Param(F32({8, 16})), Param(F32({16, 4})))), "f32[8,4]");
}

TEST_F(ConvDotShapeTest, DotWithSeveralBatchAndContractingDims) {
  // lhs [b0=2, m=3, k0=4, b1=5, k1=6], rhs [k1=6, b1=5, n=7, b0=2, k0=4]:
  // result = batch (2, 5), lhs free (3), rhs free (7).
  Instruction* lhs = Param(F32({2, 3, 4, 5, 6}));
  Instruction* rhs = Param(F32({6, 5, 7, 2, 4}));
  EXPECT_EQ(S(b_.Dot(lhs, rhs, DotDims({0, 3}, {3, 1}, {2, 4}, {4, 0}))), "f32[2,5,3,7]");
  // Preferred element type.
  Instruction* a = Param(Shape::Array(DType::kBF16, {2, 3}));
  Instruction* b = Param(Shape::Array(DType::kBF16, {3}));
  EXPECT_EQ(S(b_.Dot(a, b, DotDims({}, {}, {1}, {0}), DType::kF32)), "f32[2]");
}

TEST_F(ConvDotShapeTest, DotWithEmptyDimensions) {
  // An empty contraction still gives the free dims; an empty free dim gives an empty result.
  EXPECT_EQ(S(b_.MatMul(Param(F32({2, 0})), Param(F32({0, 5})))), "f32[2,5]");
  EXPECT_EQ(S(b_.MatMul(Param(F32({0, 3})), Param(F32({3, 4})))), "f32[0,4]");
  // An empty batch dim pairs with an empty batch dim only.
  EXPECT_EQ(S(b_.Dot(Param(F32({0, 2, 3})), Param(F32({0, 3, 4})), DotDims({0}, {0}, {2}, {1}))),
            "f32[0,2,4]");
  EXPECT_EQ(b_.Dot(Param(F32({0, 2, 3})), Param(F32({1, 3, 4})), DotDims({0}, {0}, {2}, {1})),
            nullptr);
  EXPECT_THAT(Error(), HasSubstr("lhs batch dimension 0 has size 0 but rhs batch dimension 0 has "
                                 "size 1"));
}

TEST_F(ConvDotShapeTest, DotContractingSizeMismatchNamesBothDimensions) {
  Instruction* lhs = Param(F32({4, 16}));
  Instruction* rhs = Param(F32({8, 5}));
  EXPECT_EQ(b_.Dot(lhs, rhs, DotDims({}, {}, {1}, {0})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("dot %dot.1: lhs contracting dimension 1 has size 16 but rhs "
                                 "contracting dimension 0 has size 8"));
}

TEST_F(ConvDotShapeTest, DotRejectsBadDimensionNumbers) {
  Instruction* lhs = Param(F32({4, 16}));
  Instruction* rhs = Param(F32({16, 5}));
  EXPECT_EQ(b_.Dot(lhs, rhs, DotDims({1}, {}, {1}, {0})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("lhs batch and contracting dimensions has duplicate entry 1"));
  Reset();
  EXPECT_EQ(b_.Dot(Param(F32({2, 3})), Param(F32({2, 3})), DotDims({0}, {}, {1}, {1})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("lhs has 1 batch dimension(s) but rhs has 0"));
}

// NHWC input, HWIO kernel, NHWC output (dim_labels=b01f_01io->b01f).
ConvolutionDimensionNumbers Nhwc() {
  ConvolutionDimensionNumbers dn;
  dn.input_batch = 0;
  dn.input_feature = 3;
  dn.input_spatial = {1, 2};
  dn.kernel_input_feature = 2;
  dn.kernel_output_feature = 3;
  dn.kernel_spatial = {0, 1};
  dn.output_batch = 0;
  dn.output_feature = 3;
  dn.output_spatial = {1, 2};
  return dn;
}

WindowDim Window(int64_t size, int64_t stride = 1, int64_t pad_low = 0, int64_t pad_high = 0,
                 int64_t lhs_dilation = 1, int64_t rhs_dilation = 1) {
  return WindowDim{size, stride, pad_low, pad_high, lhs_dilation, rhs_dilation, false};
}

TEST_F(ConvDotShapeTest, ConvolutionSamePaddingAndStride) {
  Instruction* input = Param(F32({8, 32, 32, 3}));
  Instruction* kernel = Param(F32({3, 3, 3, 16}));
  EXPECT_EQ(S(b_.Convolution(input, kernel, {Window(3, 1, 1, 1), Window(3, 1, 1, 1)}, Nhwc())),
            "f32[8,32,32,16]");
  // (32 + 1 + 1 - 3) / 2 + 1 = 16.
  EXPECT_EQ(S(b_.Convolution(input, kernel, {Window(3, 2, 1, 1), Window(3, 2, 1, 1)}, Nhwc())),
            "f32[8,16,16,16]");
}

TEST_F(ConvDotShapeTest, ConvolutionWithDilations) {
  Instruction* input = Param(F32({1, 10, 5, 4}));
  Instruction* kernel = Param(F32({3, 2, 4, 6}));
  // dim 0: window dilated to (3-1)*2+1 = 5 over 10 -> 6.
  // dim 1: base dilated to (5-1)*2+1 = 9, window 2 -> 8.
  EXPECT_EQ(S(b_.Convolution(input, kernel, {Window(3, 1, 0, 0, 1, 2), Window(2, 1, 0, 0, 2, 1)},
                             Nhwc())),
            "f32[1,6,8,6]");
}

TEST_F(ConvDotShapeTest, ConvolutionWithFeatureGroups) {
  // Depthwise: 8 input features in 8 groups, kernel input feature 1, 16 outputs.
  Instruction* input = Param(F32({2, 5, 5, 8}));
  Instruction* kernel = Param(F32({3, 3, 1, 16}));
  EXPECT_EQ(S(b_.Convolution(input, kernel, {Window(3), Window(3)}, Nhwc(), 8)), "f32[2,3,3,16]");
  EXPECT_EQ(b_.Convolution(input, kernel, {Window(3), Window(3)}, Nhwc(), 4), nullptr);
  EXPECT_THAT(Error(), HasSubstr("input feature dimension has size 8 but must be "
                                 "feature_group_count 4 x kernel input features 1"));
}

TEST_F(ConvDotShapeTest, ConvolutionWithBatchGroups) {
  // Weight-gradient form: batch 6 split into 3 groups, output batch 2.
  Instruction* input = Param(F32({6, 4, 4, 2}));
  Instruction* kernel = Param(F32({2, 2, 2, 3}));
  EXPECT_EQ(S(b_.Convolution(input, kernel, {Window(2), Window(2)}, Nhwc(), 1, 3)), "f32[2,3,3,3]");
  EXPECT_EQ(b_.Convolution(input, kernel, {Window(2), Window(2)}, Nhwc(), 1, 4), nullptr);
  EXPECT_THAT(Error(), HasSubstr("input batch 6 and kernel output features 3 must be divisible by "
                                 "batch_group_count 4"));
}

TEST_F(ConvDotShapeTest, ConvolutionWithEmptyBatchOrWindowLargerThanInput) {
  EXPECT_EQ(S(b_.Convolution(Param(F32({0, 5, 5, 2})), Param(F32({3, 3, 2, 4})),
                             {Window(3), Window(3)}, Nhwc())),
            "f32[0,3,3,4]");
  // A 3-wide window over 2 inputs fits nowhere: (2 - 3) < 0 gives 0 outputs, not an error.
  EXPECT_EQ(S(b_.Convolution(Param(F32({1, 2, 5, 2})), Param(F32({3, 3, 2, 4})),
                             {Window(3), Window(3)}, Nhwc())),
            "f32[1,0,3,4]");
}

TEST_F(ConvDotShapeTest, ConvolutionWindowMustMatchKernel) {
  Instruction* input = Param(F32({1, 5, 5, 1}));
  Instruction* kernel = Param(F32({3, 3, 1, 1}));
  EXPECT_EQ(b_.Convolution(input, kernel, {Window(2), Window(3)}, Nhwc()), nullptr);
  EXPECT_THAT(Error(), HasSubstr("window size 2 of spatial dimension 0 must equal the kernel's 3"));
  Reset();
  EXPECT_EQ(b_.Convolution(Param(F32({1, 5, 5, 1})), Param(F32({3, 3, 1, 1})),
                           {Window(3, 0), Window(3)}, Nhwc()),
            nullptr);
  EXPECT_THAT(Error(),
              HasSubstr("window dimension 0 must have positive size, stride and dilations"));
}

}  // namespace
}  // namespace alpa::ir
