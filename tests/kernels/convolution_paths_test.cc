// Every convolution path against the direct definition (test_util.h) on small odd sizes.
// Inputs are small integers, so f32/f64/integer results must match exactly whatever the
// summation order; f16/bf16 are checked within one 16-bit rounding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/convolution.h"
#include "kernels/onednn.h"
#include "test_util.h"

namespace alpa::kernels {
namespace {

using ir::DType;
using testing::MakeParams;
using testing::NaiveConvolution;
using testing::OutputSpatial;
using testing::Product;
using testing::RandomBuffer;

struct Case {
  std::string name;
  ConvolutionParams params;
};

int64_t InputCount(const ConvolutionParams& p) {
  return p.batch * p.input_features * Product(p.input_spatial);
}
int64_t KernelCount(const ConvolutionParams& p) {
  return p.output_features * (p.input_features / p.feature_group_count) * Product(p.kernel_spatial);
}
int64_t OutputCount(const ConvolutionParams& p) {
  return (p.batch / p.batch_group_count) * p.output_features * Product(p.output_spatial);
}

// Builds a case from sizes plus per-dim stride/pad/dilation, recomputing the output sizes.
Case Make(std::string name, int64_t n, int64_t c_in, int64_t c_out, std::vector<int64_t> in,
          std::vector<int64_t> k, std::vector<int64_t> stride, std::vector<int64_t> pad_low,
          std::vector<int64_t> pad_high, std::vector<int64_t> rhs_dil,
          std::vector<int64_t> lhs_dil = {}, int64_t groups = 1, int64_t batch_groups = 1,
          std::vector<bool> reversal = {}) {
  ConvolutionParams p = MakeParams(n, c_in, c_out, std::move(in), std::move(k));
  p.strides = std::move(stride);
  p.pad_low = std::move(pad_low);
  p.pad_high = std::move(pad_high);
  p.rhs_dilation = std::move(rhs_dil);
  if (!lhs_dil.empty()) p.lhs_dilation = std::move(lhs_dil);
  p.feature_group_count = groups;
  p.batch_group_count = batch_groups;
  p.window_reversal = std::move(reversal);
  p.output_spatial = OutputSpatial(p);
  return {std::move(name), std::move(p)};
}

std::vector<Case> OneDnnCases() {
  return {
      Make("1d", 1, 1, 1, {7}, {3}, {1}, {0}, {0}, {1}),
      Make("1d_stride_pad", 3, 3, 7, {17}, {3}, {2}, {1}, {2}, {1}),
      Make("1d_dilated", 1, 3, 1, {17}, {3}, {1}, {0}, {0}, {3}),
      Make("2d", 3, 7, 3, {7, 17}, {3, 1}, {1, 2}, {1, 0}, {1, 3}, {1, 2}),
      Make("2d_grouped", 1, 6, 9, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {}, 3),
      Make("2d_depthwise", 3, 7, 7, {17, 3}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, {}, 7),
      Make("3d", 1, 3, 7, {3, 7, 3}, {1, 3, 3}, {1, 1, 2}, {0, 1, 1}, {0, 1, 0}, {1, 2, 1}),
      Make("3d_grouped", 3, 4, 2, {3, 3, 7}, {3, 1, 3}, {1, 1, 1}, {1, 0, 2}, {1, 0, 2}, {1, 1, 1},
           {}, 2),
  };
}

std::vector<Case> ReferenceCases() {
  return {
      Make("0d", 3, 7, 3, {}, {}, {}, {}, {}, {}),
      Make("4d", 1, 3, 3, {3, 1, 7, 3}, {1, 1, 3, 3}, {1, 1, 2, 1}, {0, 0, 1, 1}, {0, 0, 1, 0},
           {1, 1, 1, 2}),
      Make("lhs_dilation", 3, 3, 1, {7, 3}, {3, 3}, {1, 2}, {2, 2}, {2, 1}, {1, 1}, {2, 3}),
      Make("negative_pad", 1, 3, 7, {17}, {3}, {2}, {-3}, {-1}, {2}),
      Make("mixed_pad", 1, 1, 3, {7, 7}, {3, 3}, {1, 1}, {-1, 2}, {3, -2}, {1, 1}),
      Make("batch_groups", 6, 3, 9, {7}, {3}, {1}, {1}, {1}, {1}, {}, 1, 3),
      Make("reversal", 3, 3, 3, {7, 3}, {3, 3}, {1, 1}, {2, 1}, {0, 1}, {1, 1}, {}, 1, 1,
           {true, false}),
      Make("everything", 4, 2, 4, {7, 3}, {3, 2}, {2, 1}, {-1, 1}, {3, 0}, {2, 1}, {3, 1}, 1, 2,
           {false, true}),
      Make("empty_kernel_window", 1, 3, 3, {7}, {0}, {2}, {0}, {0}, {1}),
  };
}

template <typename T>
void ExpectExact(DType dtype, const Case& c, ConvolutionPath path) {
  SCOPED_TRACE(c.name + " " + std::string(ir::DTypeName(dtype)));
  const ConvolutionParams& p = c.params;
  ASSERT_TRUE(ValidateConvolutionParams(p).ok()) << ValidateConvolutionParams(p).ToString();
  EXPECT_EQ(SelectConvolutionPath(dtype, p), path);
  const auto input = RandomBuffer<T>(InputCount(p), 11);
  const auto kernel = RandomBuffer<T>(KernelCount(p), 12);
  const std::vector<T> expected = NaiveConvolution(p, input, kernel);
  std::vector<T> output(static_cast<size_t>(OutputCount(p)), T(7));
  Status status = Convolution(dtype, p, input.data(), kernel.data(), output.data());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(output, expected);
  std::vector<T> reference(output.size(), T(7));
  ASSERT_TRUE(ReferenceConvolution(dtype, p, input.data(), kernel.data(), reference.data()).ok());
  EXPECT_EQ(reference, expected);
  if constexpr (std::is_same_v<T, float>) {
    if (path == ConvolutionPath::kOneDnn) {
      // The oneDNN primitive itself accepted and ran the problem (no silent fallback).
      std::fill(output.begin(), output.end(), 7.0f);
      ASSERT_TRUE(
          internal::OneDnnConvolution(DType::kF32, p, input.data(), kernel.data(), output.data())
              .ok());
      EXPECT_EQ(output, expected);
    }
  }
}

TEST(ConvolutionPathsTest, OneDnnPathMatchesDefinition) {
  for (const Case& c : OneDnnCases()) ExpectExact<float>(DType::kF32, c, ConvolutionPath::kOneDnn);
}

TEST(ConvolutionPathsTest, ReferencePathMatchesDefinition) {
  for (const Case& c : ReferenceCases()) {
    ExpectExact<float>(DType::kF32, c, ConvolutionPath::kReference);
    ExpectExact<int32_t>(DType::kS32, c, ConvolutionPath::kReference);
  }
}

TEST(ConvolutionPathsTest, OtherDTypesUseTheReferencePath) {
  for (const Case& c : OneDnnCases()) {
    ExpectExact<double>(DType::kF64, c, ConvolutionPath::kReference);
    ExpectExact<std::complex<float>>(DType::kC64, c, ConvolutionPath::kReference);
    ExpectExact<std::complex<double>>(DType::kC128, c, ConvolutionPath::kReference);
    ExpectExact<int64_t>(DType::kS64, c, ConvolutionPath::kReference);
    ExpectExact<uint8_t>(DType::kU8, c, ConvolutionPath::kReference);
  }
}

// f16/bf16: through oneDNN when the shape allows it (in 16 bits where the CPU has such kernels,
// else widened to f32), through the loop otherwise. Products of small integers are exact, so
// compare with one 16-bit rounding of the exact sum.
template <typename T>
void ExpectHalfClose(DType dtype, const Case& c, float relative) {
  SCOPED_TRACE(c.name + " " + std::string(ir::DTypeName(dtype)));
  const ConvolutionParams& p = c.params;
  const auto input = RandomBuffer<T>(InputCount(p), 21);
  const auto kernel = RandomBuffer<T>(KernelCount(p), 22);
  const std::vector<T> expected = NaiveConvolution(p, input, kernel);
  auto expect_close = [&](const std::vector<T>& output) {
    for (size_t i = 0; i < output.size(); ++i) {
      const float want = static_cast<float>(expected[i]);
      EXPECT_NEAR(static_cast<float>(output[i]), want, std::abs(want) * relative) << i;
    }
  };
  std::vector<T> output(static_cast<size_t>(OutputCount(p)));
  ASSERT_TRUE(Convolution(dtype, p, input.data(), kernel.data(), output.data()).ok());
  expect_close(output);
  if (SelectConvolutionPath(dtype, p) != ConvolutionPath::kOneDnn) return;
  // oneDNN's own 16-bit primitive either runs the problem right or declines it (this CPU has no
  // such kernel); it never fails or writes a wrong result.
  std::fill(output.begin(), output.end(), T(7));
  const Status status =
      internal::OneDnnConvolution(dtype, p, input.data(), kernel.data(), output.data());
  if (status.code() == StatusCode::kUnimplemented) return;
  ASSERT_TRUE(status.ok()) << status.ToString();
  expect_close(output);
}

TEST(ConvolutionPathsTest, HalfTypesMatchDefinition) {
  for (const auto& cases : {OneDnnCases(), ReferenceCases()}) {
    for (const Case& c : cases) {
      ExpectHalfClose<Eigen::half>(DType::kF16, c, 0x1p-10f);
      ExpectHalfClose<Eigen::bfloat16>(DType::kBF16, c, 0x1p-7f);
    }
  }
  EXPECT_EQ(SelectConvolutionPath(DType::kBF16, OneDnnCases()[0].params), ConvolutionPath::kOneDnn);
}

TEST(ConvolutionPathsTest, NonIntegerF32WithinRounding) {
  // Fractional inputs on the oneDNN path: within f32 rounding of a 189-term sum.
  const Case c = Make("2d_fractional", 2, 21, 5, {17, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  const ConvolutionParams& p = c.params;
  std::vector<float> input(InputCount(p)), kernel(KernelCount(p));
  for (size_t i = 0; i < input.size(); ++i) input[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  for (size_t i = 0; i < kernel.size(); ++i) kernel[i] = 0.03f * static_cast<float>(i % 13) - 0.2f;
  std::vector<float> output(OutputCount(p)), expected(OutputCount(p));
  ASSERT_TRUE(Convolution(DType::kF32, p, input.data(), kernel.data(), output.data()).ok());
  ASSERT_TRUE(
      ReferenceConvolution(DType::kF32, p, input.data(), kernel.data(), expected.data()).ok());
  for (size_t i = 0; i < output.size(); ++i) EXPECT_NEAR(output[i], expected[i], 1e-4) << i;
}

}  // namespace
}  // namespace alpa::kernels
