// f32 reductions over [outer, reduce, inner] views: column folds in the interpreter's order (bit
// for bit), row sums close to the exact sum, NaN propagation, empty ranges, and the same bytes
// with one thread or two.
#include "kernels/reduce.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace alpa::kernels {
namespace {

std::vector<float> Values(int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  }
  return values;
}

TEST(ReduceTest, ColumnsFoldInOrderExactly) {
  const int64_t outer = 3, reduce = 17, inner = 2500;  // inner spans two column blocks
  const std::vector<float> in = Values(outer * reduce * inner);
  std::vector<float> sum(static_cast<size_t>(outer * inner)), max(sum.size());
  ReduceF32(ReduceFn::kSum, 0.5f, in.data(), outer, reduce, inner, sum.data());
  ReduceF32(ReduceFn::kMax, -1e30f, in.data(), outer, reduce, inner, max.data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      float s = 0.5f, m = -1e30f;
      for (int64_t r = 0; r < reduce; ++r) {
        const float x = in[static_cast<size_t>((o * reduce + r) * inner + i)];
        s += x;
        m = std::max(m, x);
      }
      ASSERT_EQ(sum[static_cast<size_t>(o * inner + i)], s);
      ASSERT_EQ(max[static_cast<size_t>(o * inner + i)], m);
    }
  }
}

TEST(ReduceTest, RowSumsAreCloseToTheExactSum) {
  for (const int64_t reduce : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{300001}}) {
    const int64_t outer = reduce > 1000 ? 1 : 5;
    const std::vector<float> in = Values(outer * reduce);
    std::vector<float> out(static_cast<size_t>(outer));
    ReduceF32(ReduceFn::kSum, 1.0f, in.data(), outer, reduce, 1, out.data());
    for (int64_t o = 0; o < outer; ++o) {
      double exact = 1.0, magnitude = 1.0;
      for (int64_t r = 0; r < reduce; ++r) {
        exact += in[static_cast<size_t>(o * reduce + r)];
        magnitude += std::fabs(in[static_cast<size_t>(o * reduce + r)]);
      }
      EXPECT_NEAR(out[static_cast<size_t>(o)], exact, 1e-6 * magnitude) << "reduce " << reduce;
    }
  }
}

TEST(ReduceTest, MaxAndMinPropagateNaNAndEmptyRangesGiveInit) {
  std::vector<float> in = Values(40);
  in[13] = std::numeric_limits<float>::quiet_NaN();
  float max[2], min[2];
  ReduceF32(ReduceFn::kMax, -INFINITY, in.data(), 2, 20, 1, max);
  ReduceF32(ReduceFn::kMin, INFINITY, in.data(), 2, 20, 1, min);
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(min[0]));
  EXPECT_FALSE(std::isnan(max[1]) || std::isnan(min[1]));
  float init[3];
  ReduceF32(ReduceFn::kSum, 4.0f, in.data(), 3, 0, 1, init);
  EXPECT_EQ(std::vector<float>(init, init + 3), (std::vector<float>{4, 4, 4}));
}

TEST(ReduceTest, OneThreadAndTwoGiveTheSameBytes) {
  const std::vector<float> in = Values(1 << 20);
  float one[4], two[4];
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  ReduceF32(ReduceFn::kSum, 0.0f, in.data(), 1, 1 << 20, 1, one);
  ReduceF32(ReduceFn::kSum, 0.0f, in.data(), 3, 1 << 18, 1, one + 1);
  omp_set_num_threads(2);
  ReduceF32(ReduceFn::kSum, 0.0f, in.data(), 1, 1 << 20, 1, two);
  ReduceF32(ReduceFn::kSum, 0.0f, in.data(), 3, 1 << 18, 1, two + 1);
  omp_set_num_threads(threads);
  EXPECT_EQ(std::memcmp(one, two, sizeof(one)), 0);
}

}  // namespace
}  // namespace alpa::kernels
