#include "kernels/matmul.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <limits>
#include <thread>
#include <tuple>
#include <vector>

#include "kernels/element_type.h"
#include "kernels/onednn.h"
#include "test_util.h"

namespace alpa::kernels {
namespace {

using ir::DType;
using testing::NaiveMatMul;
using testing::RandomBuffer;

TEST(BatchMatMulTest, HandComputed2x2) {
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<float> b = {5, 6, 7, 8};
  std::vector<float> c(4, -1);
  ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 2, 2, 2, a.data(), b.data(), c.data()).ok());
  EXPECT_THAT(c, ::testing::ElementsAre(19, 22, 43, 50));
}

TEST(BatchMatMulTest, BatchesAreIndependent) {
  // Batch 0: [1 2] x [[1],[1]] = 3; batch 1: [3 4] x [[2],[0]] = 6.
  const std::vector<int32_t> a = {1, 2, 3, 4};
  const std::vector<int32_t> b = {1, 1, 2, 0};
  std::vector<int32_t> c(2);
  ASSERT_TRUE(BatchMatMul(DType::kS32, 2, 1, 2, 1, a.data(), b.data(), c.data()).ok());
  EXPECT_THAT(c, ::testing::ElementsAre(3, 6));
}

// `batch` matrices of rows x cols, each transposed (stored cols x rows).
template <typename T>
std::vector<T> Transposed(const std::vector<T>& matrices, int64_t batch, int64_t rows,
                          int64_t cols) {
  std::vector<T> transposed(matrices.size());
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        transposed[static_cast<size_t>((p * cols + c) * rows + r)] =
            matrices[static_cast<size_t>((p * rows + r) * cols + c)];
      }
    }
  }
  return transposed;
}

// Every dtype against the triple loop over odd sizes, each operand row-major and transposed.
// Inputs are small integers, so every partial sum is exact in all of these types and the results
// must match exactly.
template <typename T>
void ExpectMatchesNaive(DType dtype) {
  const int64_t sizes[] = {1, 3, 7, 17};
  constexpr MatrixLayout kLayouts[] = {MatrixLayout::kRowMajor, MatrixLayout::kTransposed};
  uint32_t seed = 1;
  for (int64_t batch : {1, 3}) {
    for (int64_t m : sizes) {
      for (int64_t k : sizes) {
        for (int64_t n : sizes) {
          const auto a = RandomBuffer<T>(batch * m * k, seed++);
          const auto b = RandomBuffer<T>(batch * k * n, seed++);
          const std::vector<T> expected = NaiveMatMul(batch, m, k, n, a, b);
          for (MatrixLayout a_layout : kLayouts) {
            for (MatrixLayout b_layout : kLayouts) {
              const std::vector<T> a_stored =
                  a_layout == MatrixLayout::kRowMajor ? a : Transposed(a, batch, m, k);
              const std::vector<T> b_stored =
                  b_layout == MatrixLayout::kRowMajor ? b : Transposed(b, batch, k, n);
              std::vector<T> c(static_cast<size_t>(batch * m * n));
              ASSERT_TRUE(BatchMatMul(dtype, batch, m, k, n, a_stored.data(), b_stored.data(),
                                      c.data(), a_layout, b_layout)
                              .ok());
              ASSERT_EQ(c, expected)
                  << ir::DTypeName(dtype) << " batch=" << batch << " m=" << m << " k=" << k
                  << " n=" << n << " a transposed=" << (a_layout == MatrixLayout::kTransposed)
                  << " b transposed=" << (b_layout == MatrixLayout::kTransposed);
            }
          }
        }
      }
    }
  }
}

TEST(BatchMatMulTest, MatchesNaiveForEveryDType) {
  ExpectMatchesNaive<float>(DType::kF32);
  ExpectMatchesNaive<double>(DType::kF64);
  ExpectMatchesNaive<Eigen::half>(DType::kF16);
  ExpectMatchesNaive<Eigen::bfloat16>(DType::kBF16);
  ExpectMatchesNaive<int8_t>(DType::kS8);
  ExpectMatchesNaive<int32_t>(DType::kS32);
  ExpectMatchesNaive<int64_t>(DType::kS64);
  ExpectMatchesNaive<uint16_t>(DType::kU16);
  ExpectMatchesNaive<std::complex<float>>(DType::kC64);
  ExpectMatchesNaive<std::complex<double>>(DType::kC128);
}

TEST(BatchMatMulTest, F32LargeMatchesNaiveWithinRounding) {
  // Non-integer inputs: oneDNN sums in another order, so allow f32 rounding of a k-term sum.
  const int64_t batch = 2, m = 33, k = 129, n = 65;
  std::vector<float> a(batch * m * k), b(batch * k * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.001f * static_cast<float>((i * 37) % 101) - 0.05f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.002f * static_cast<float>((i * 11) % 97) - 0.09f;
  std::vector<float> c(batch * m * n);
  ASSERT_TRUE(BatchMatMul(DType::kF32, batch, m, k, n, a.data(), b.data(), c.data()).ok());
  const std::vector<float> expected = NaiveMatMul(batch, m, k, n, a, b);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], expected[i], 1e-5) << i;
}

TEST(BatchMatMulTest, HalfTypesRoundOnceFromF32) {
  // Random non-integer inputs: the result must be the f32 sum rounded once, within one 16-bit ulp
  // (oneDNN's summation order can move the f32 sum across a rounding boundary).
  const int64_t m = 7, k = 17, n = 3;
  std::vector<float> a32(m * k), b32(k * n);
  for (size_t i = 0; i < a32.size(); ++i) a32[i] = 0.37f * static_cast<float>(i % 11) - 1.1f;
  for (size_t i = 0; i < b32.size(); ++i) b32[i] = 0.23f * static_cast<float>(i % 7) - 0.6f;
  std::vector<Eigen::half> ah(a32.begin(), a32.end()), bh(b32.begin(), b32.end()), ch(m * n);
  std::vector<Eigen::bfloat16> ab(a32.begin(), a32.end()), bb(b32.begin(), b32.end()), cb(m * n);
  ASSERT_TRUE(BatchMatMul(DType::kF16, 1, m, k, n, ah.data(), bh.data(), ch.data()).ok());
  ASSERT_TRUE(BatchMatMul(DType::kBF16, 1, m, k, n, ab.data(), bb.data(), cb.data()).ok());
  const auto eh = NaiveMatMul<Eigen::half>(1, m, k, n, ah, bh);
  const auto eb = NaiveMatMul<Eigen::bfloat16>(1, m, k, n, ab, bb);
  for (int64_t i = 0; i < m * n; ++i) {
    const float want_h = static_cast<float>(eh[i]), want_b = static_cast<float>(eb[i]);
    EXPECT_NEAR(static_cast<float>(ch[i]), want_h, std::abs(want_h) * 0x1p-10f + 1e-3f) << i;
    EXPECT_NEAR(static_cast<float>(cb[i]), want_b, std::abs(want_b) * 0x1p-7f + 1e-2f) << i;
  }
}

// oneDNN's own f16/bf16 matmul either runs a shape exactly (small integers: every partial sum is
// exact) or declines it because this CPU has no such kernel; it never fails otherwise.
template <typename T>
void ExpectOneDnnHalfExactOrDeclined(DType dtype) {
  for (const auto& [m, k, n] : {std::tuple{5, 11, 13}, {64, 256, 64}, {1, 300, 7}}) {
    const auto a = RandomBuffer<T>(m * k, m), b = RandomBuffer<T>(k * n, n);
    std::vector<T> c(static_cast<size_t>(m * n));
    const Status status = internal::OneDnnMatMul(dtype, 1, m, k, n, a.data(), b.data(), c.data());
    if (status.code() == StatusCode::kUnimplemented) continue;
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(c, NaiveMatMul(1, m, k, n, a, b))
        << ir::DTypeName(dtype) << " " << m << "x" << k << "x" << n;
  }
}

TEST(BatchMatMulTest, OneDnnHalfKernelsAreExactOrDecline) {
  ExpectOneDnnHalfExactOrDeclined<Eigen::half>(DType::kF16);
  ExpectOneDnnHalfExactOrDeclined<Eigen::bfloat16>(DType::kBF16);
  EXPECT_EQ(internal::OneDnnMatMul(DType::kF64, 1, 1, 1, 1, nullptr, nullptr, nullptr).code(),
            StatusCode::kUnimplemented);
}

TEST(BatchMatMulTest, WideningScratchGrowsOnlyAndIsPerThread) {
  // A smaller request reuses the buffer (no allocation per call); a larger one grows it.
  float* big = internal::ThreadF32Scratch(0, 1000);
  EXPECT_EQ(internal::ThreadF32Scratch(0, 10), big);
  EXPECT_NE(internal::ThreadF32Scratch(1, 10), big);
  float* other_thread = nullptr;
  std::thread([&] { other_thread = internal::ThreadF32Scratch(0, 10); }).join();
  EXPECT_NE(other_thread, big);
  // A widened f16 call after a larger one writes only its own result.
  const auto a = RandomBuffer<Eigen::half>(3 * 4, 1), b = RandomBuffer<Eigen::half>(4 * 2, 2);
  std::vector<Eigen::half> c(3 * 2 + 1, Eigen::half(9.0f));
  ASSERT_TRUE(BatchMatMul(DType::kF16, 1, 3, 4, 2, a.data(), b.data(), c.data()).ok());
  EXPECT_EQ(static_cast<float>(c.back()), 9.0f);
  c.pop_back();
  EXPECT_EQ(c, NaiveMatMul(1, 3, 4, 2, a, b));
}

TEST(BatchMatMulTest, HalfTypesAccumulateInF32) {
  // 1 + 2048 * 2^-11 = 2 in f32. Accumulating in f16 would stick at 1 (1 + 2^-11 rounds to 1).
  const int64_t k = 2049;
  std::vector<Eigen::half> a(k, Eigen::half(0x1p-11f)), b(k, Eigen::half(1.0f));
  a[0] = Eigen::half(1.0f);
  Eigen::half c(0.0f);
  ASSERT_TRUE(BatchMatMul(DType::kF16, 1, 1, k, 1, a.data(), b.data(), &c).ok());
  EXPECT_EQ(static_cast<float>(c), 2.0f);
  // Same for bf16 with 256 terms of 2^-8.
  const int64_t kb = 257;
  std::vector<Eigen::bfloat16> ab(kb, Eigen::bfloat16(0x1p-8f)), bb(kb, Eigen::bfloat16(1.0f));
  ab[0] = Eigen::bfloat16(1.0f);
  Eigen::bfloat16 cb(0.0f);
  ASSERT_TRUE(BatchMatMul(DType::kBF16, 1, 1, kb, 1, ab.data(), bb.data(), &cb).ok());
  EXPECT_EQ(static_cast<float>(cb), 2.0f);
}

TEST(BatchMatMulTest, IntegersAreExactAndWrap) {
  // s64 beyond f64's 53-bit mantissa: 3037000499^2 + 1 * 1.
  const std::vector<int64_t> a64 = {3037000499, 1};
  const std::vector<int64_t> b64 = {3037000499, 1};
  int64_t c64 = 0;
  ASSERT_TRUE(BatchMatMul(DType::kS64, 1, 1, 2, 1, a64.data(), b64.data(), &c64).ok());
  EXPECT_EQ(c64, 9223372030926249002);
  // s32: INT32_MAX + 1 wraps to INT32_MIN; 65536 * 65536 = 2^32 wraps to 0.
  const std::vector<int32_t> a32 = {std::numeric_limits<int32_t>::max(), 1, 65536, 0};
  const std::vector<int32_t> b32 = {1, 65536, 1, 0};
  std::vector<int32_t> c32(4);
  ASSERT_TRUE(BatchMatMul(DType::kS32, 1, 2, 2, 2, a32.data(), b32.data(), c32.data()).ok());
  // Row 0: [MAX, 1] x [[1, 65536], [1, 0]] = [MAX + 1, MAX * 65536]; row 1: [65536, 0] -> [65536,
  // 2^32].
  const int32_t max = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(c32[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(c32[1], static_cast<int32_t>(static_cast<uint32_t>(max) * 65536u));
  EXPECT_EQ(c32[2], 65536);
  EXPECT_EQ(c32[3], 0);
  // u8: 16 * 16 = 256 wraps to 0; s8: -128 * -1 wraps to -128.
  const uint8_t au8 = 16, bu8 = 16;
  uint8_t cu8 = 1;
  ASSERT_TRUE(BatchMatMul(DType::kU8, 1, 1, 1, 1, &au8, &bu8, &cu8).ok());
  EXPECT_EQ(cu8, 0);
  const int8_t as8 = -128, bs8 = -1;
  int8_t cs8 = 0;
  ASSERT_TRUE(BatchMatMul(DType::kS8, 1, 1, 1, 1, &as8, &bs8, &cs8).ok());
  EXPECT_EQ(cs8, -128);
}

TEST(BatchMatMulTest, EmptyContractionWritesZeros) {
  std::vector<float> c(6, 7.0f);
  ASSERT_TRUE(BatchMatMul(DType::kF32, 2, 1, 0, 3, nullptr, nullptr, c.data()).ok());
  EXPECT_THAT(c, ::testing::Each(0.0f));
  std::vector<int64_t> ci(4, 7);
  ASSERT_TRUE(BatchMatMul(DType::kS64, 1, 2, 0, 2, nullptr, nullptr, ci.data()).ok());
  EXPECT_THAT(ci, ::testing::Each(0));
}

TEST(BatchMatMulTest, EmptyOutputWritesNothing) {
  const std::vector<float> a(6, 1.0f);
  float sentinel = 5.0f;
  ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 0, 3, 2, nullptr, a.data(), &sentinel).ok());
  ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 2, 3, 0, a.data(), nullptr, &sentinel).ok());
  ASSERT_TRUE(BatchMatMul(DType::kF32, 0, 2, 3, 2, nullptr, nullptr, nullptr).ok());
  EXPECT_EQ(sentinel, 5.0f);
}

TEST(BatchMatMulTest, RejectsBadArguments) {
  float x = 0;
  Status status = BatchMatMul(DType::kPred, 1, 1, 1, 1, &x, &x, &x);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("pred"));
  EXPECT_EQ(BatchMatMul(DType::kF8E4M3FN, 1, 1, 1, 1, &x, &x, &x).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(BatchMatMul(DType::kF32, 1, -1, 1, 1, &x, &x, &x).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchMatMul(DType::kF32, 1, 1, 1, 1, nullptr, &x, &x).code(),
            StatusCode::kInvalidArgument);
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(BatchMatMul(DType::kF32, huge, huge, 1, 1, &x, &x, &x).code(),
            StatusCode::kInvalidArgument);
}

TEST(BatchMatMulTest, PrimitiveIsCreatedOncePerShape) {
  const auto a = RandomBuffer<float>(5 * 11, 7), b = RandomBuffer<float>(11 * 13, 8);
  std::vector<float> c(5 * 13);
  ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 5, 11, 13, a.data(), b.data(), c.data()).ok());
  const int64_t cached = internal::OneDnnCacheSize();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 5, 11, 13, a.data(), b.data(), c.data()).ok());
  }
  EXPECT_EQ(internal::OneDnnCacheSize(), cached);
  ASSERT_TRUE(BatchMatMul(DType::kF32, 1, 5, 11, 1, a.data(), b.data(), c.data()).ok());
  EXPECT_EQ(internal::OneDnnCacheSize(), cached + 1);
  // The primitive runs the shape itself (no silent fallback to the loop).
  EXPECT_TRUE(internal::OneDnnMatMul(DType::kF32, 1, 5, 11, 13, a.data(), b.data(), c.data()).ok());
}

TEST(BatchMatMulTest, ConcurrentCallsFromSeveralThreadsAgree) {
  // Four threads share two shapes (one primitive each) and must all get the exact result.
  constexpr int kThreads = 4;
  std::vector<char> ok(kThreads, 0);  // not vector<bool>: threads write neighbours
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ok] {
      const int64_t m = 9 + (t % 2), k = 31, n = 17;
      bool all = true;
      for (int round = 0; round < 20; ++round) {
        const auto a = RandomBuffer<float>(2 * m * k, 100 * t + round);
        const auto b = RandomBuffer<float>(2 * k * n, 100 * t + round + 50);
        std::vector<float> c(2 * m * n);
        all = all && BatchMatMul(DType::kF32, 2, m, k, n, a.data(), b.data(), c.data()).ok() &&
              c == NaiveMatMul(2, m, k, n, a, b);
      }
      ok[t] = all;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(ok, ::testing::Each(1));
}

}  // namespace
}  // namespace alpa::kernels
