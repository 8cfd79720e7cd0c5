// The elementwise kernels against their definitions: XLA's NaN rules for maximum, minimum and
// comparisons, the approximated functions within a few ulp of the C library, selects by mask, and
// the same bytes whatever the OpenMP team size.
#include "kernels/elementwise.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "test_util.h"

namespace alpa::kernels {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A ramp over [lo, hi] long enough to span several chunks of the parallel loop.
std::vector<float> Ramp(float lo, float hi, int64_t n = 100003) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] =
        lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  }
  return values;
}

struct UnaryCase {
  UnaryFn fn;
  float lo, hi;
  double (*reference)(double);
  int64_t max_ulps;
};

TEST(ElementwiseTest, UnaryFunctionsAreWithinAFewUlpOfTheCLibrary) {
  const UnaryCase cases[] = {
      {UnaryFn::kNegate, -5, 5, [](double x) { return -x; }, 0},
      {UnaryFn::kAbs, -5, 5, [](double x) { return std::fabs(x); }, 0},
      {UnaryFn::kSqrt, 0, 100, [](double x) { return std::sqrt(x); }, 0},
      {UnaryFn::kExp, -80, 80, [](double x) { return std::exp(x); }, 2},
      {UnaryFn::kLog, 1e-30f, 1e30f, [](double x) { return std::log(x); }, 2},
      {UnaryFn::kTanh, -10, 10, [](double x) { return std::tanh(x); }, 8},
      {UnaryFn::kRsqrt, 1e-3f, 1e3f, [](double x) { return 1 / std::sqrt(x); }, 1},
      {UnaryFn::kLogistic, -80, 80, [](double x) { return 1 / (1 + std::exp(-x)); }, 3},
  };
  for (const UnaryCase& c : cases) {
    const std::vector<float> x = Ramp(c.lo, c.hi);
    std::vector<float> out(x.size());
    UnaryF32(c.fn, x.data(), out.data(), static_cast<int64_t>(x.size()));
    int64_t worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float expected = static_cast<float>(c.reference(x[i]));
      worst = std::max(worst, testing::UlpDistance(out[i], expected));
    }
    EXPECT_LE(worst, c.max_ulps) << "function " << static_cast<int>(c.fn);
  }
}

// Where Eigen's exp and log are wrong (denormal results and arguments, infinities), the C
// library's answer.
TEST(ElementwiseTest, ExpAndLogAtTheEdges) {
  float x[] = {-kInf, -1e30f, -100.0f, -87.5f, 89.0f, kNaN, 1e-45f, 1e-40f};
  float e[8], l[8];
  UnaryF32(UnaryFn::kExp, x, e, 8);
  UnaryF32(UnaryFn::kLog, x, l, 8);
  for (int i = 0; i < 8; ++i) {
    const float want_exp = std::exp(x[i]);
    const float want_log = std::log(x[i]);
    EXPECT_TRUE(e[i] == want_exp || (std::isnan(e[i]) && std::isnan(want_exp))) << "exp " << x[i];
    if (x[i] > 0) {
      EXPECT_EQ(l[i], want_log) << "log " << x[i];
    }
  }
  EXPECT_EQ(e[0], 0.0f);
  UnaryF32(UnaryFn::kExp, x, x, 8);  // in place: each element read before it is written
  EXPECT_EQ(x[2], std::exp(-100.0f));
}

// Beyond exp's range logistic is the interpreter's 1 / (1 + exp(-x)) in f32: 0 where exp(-x)
// overflows (below -88.7), 1 where it is below half an ulp of 1.
TEST(ElementwiseTest, LogisticAtTheEdgesIsTheInterpretersFormula) {
  const float x[] = {-kInf, -100.0f, -88.0f, -87.0f, 87.0f, 88.0f, 100.0f, kInf, kNaN};
  float out[9];
  UnaryF32(UnaryFn::kLogistic, x, out, 9);
  for (int i = 0; i < 8; ++i) {
    EXPECT_LE(testing::UlpDistance(out[i], 1.0f / (1.0f + std::exp(-x[i]))), 2) << x[i];
  }
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[6], 1.0f);
  EXPECT_EQ(out[7], 1.0f);
  EXPECT_TRUE(std::isnan(out[8]));
}

TEST(ElementwiseTest, SqrtIsIeeeAtTheEdges) {
  const float x[] = {kInf, 0.0f, -0.0f, 1e-40f, -1.0f, 4.0f};
  float out[6];
  UnaryF32(UnaryFn::kSqrt, x, out, 6);
  EXPECT_EQ(out[0], kInf);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_TRUE(std::signbit(out[2]));
  EXPECT_EQ(out[3], std::sqrt(1e-40f));  // a denormal is not flushed
  EXPECT_TRUE(std::isnan(out[4]));
  EXPECT_EQ(out[5], 2.0f);
}

TEST(ElementwiseTest, MaximumAndMinimumPropagateNaNFromEitherSide) {
  const float a[] = {1, kNaN, 3, -kInf};
  const float b[] = {kNaN, 2, 1, 0};
  float max[4], min[4];
  BinaryF32(BinaryFn::kMaximum, a, b, max, 4);
  BinaryF32(BinaryFn::kMinimum, a, b, min, 4);
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]) && std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], 3);
  EXPECT_EQ(min[2], 1);
  EXPECT_EQ(max[3], 0);
  EXPECT_EQ(min[3], -kInf);
}

TEST(ElementwiseTest, ArithmeticIsExactAndMayWriteOverAnOperand) {
  std::vector<float> a = Ramp(-3, 3), b = Ramp(0.5f, 7);
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<float> sum(a.size()), quotient(a.size());
  BinaryF32(BinaryFn::kAdd, a.data(), b.data(), sum.data(), n);
  BinaryF32(BinaryFn::kDivide, a.data(), b.data(), quotient.data(), n);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(sum[i], a[i] + b[i]);
    ASSERT_EQ(quotient[i], a[i] / b[i]);
  }
  BinaryF32(BinaryFn::kMultiply, a.data(), b.data(), a.data(), n);  // out aliases a
  const std::vector<float> original = Ramp(-3, 3);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], original[i] * b[i]);
}

TEST(ElementwiseTest, ComparisonsAreIeee) {
  const float a[] = {1, kNaN, -0.0f, 2};
  const float b[] = {1, kNaN, 0.0f, 3};
  bool eq[4], ne[4], lt[4];
  CompareF32(ir::ComparisonDirection::kEq, a, b, eq, 4);
  CompareF32(ir::ComparisonDirection::kNe, a, b, ne, 4);
  CompareF32(ir::ComparisonDirection::kLt, a, b, lt, 4);
  EXPECT_EQ(std::vector<bool>(eq, eq + 4), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(std::vector<bool>(ne, ne + 4), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(std::vector<bool>(lt, lt + 4), (std::vector<bool>{false, false, false, true}));
  const int32_t i[] = {-1, 5};
  const int32_t j[] = {0, 5};
  bool ge[2];
  CompareS32(ir::ComparisonDirection::kGe, i, j, ge, 2);
  EXPECT_FALSE(ge[0]);
  EXPECT_TRUE(ge[1]);
}

TEST(ElementwiseTest, SelectConvertAndIota) {
  const bool pred[] = {true, false, true};
  const uint32_t on_true[] = {1, 2, 3}, on_false[] = {10, 20, 30};
  uint32_t selected[3];
  Select(ir::DType::kU32, pred, on_true, on_false, selected, 3);
  EXPECT_EQ(std::vector<uint32_t>(selected, selected + 3), (std::vector<uint32_t>{1, 20, 3}));

  const int32_t ints[] = {-7, 16777217};
  float converted[2];
  ConvertS32ToF32(ints, converted, 2);
  EXPECT_EQ(converted[0], -7.0f);
  EXPECT_EQ(converted[1], 16777216.0f);  // round to nearest even
  ConvertPredToF32(pred, converted, 2);
  EXPECT_EQ(converted[0], 1.0f);
  EXPECT_EQ(converted[1], 0.0f);

  int32_t iota[6];  // iota along dimension 1 of [2, 3]
  IotaS32(iota, 6, 1, 3);
  EXPECT_EQ(std::vector<int32_t>(iota, iota + 6), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  float columns[6];  // along dimension 0 of [3, 2]
  IotaF32(columns, 6, 2, 3);
  EXPECT_EQ(std::vector<float>(columns, columns + 6), (std::vector<float>{0, 0, 1, 1, 2, 2}));
}

TEST(ElementwiseTest, OneThreadAndTwoWriteTheSameBytes) {
  const std::vector<float> x = Ramp(-9, 9);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> one(x.size()), two(x.size());
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  UnaryF32(UnaryFn::kTanh, x.data(), one.data(), n);
  omp_set_num_threads(2);
  UnaryF32(UnaryFn::kTanh, x.data(), two.data(), n);
  omp_set_num_threads(threads);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), x.size() * sizeof(float)), 0);
}

// The strided binary kernel against an element-by-element loop over the result's indices, for
// the broadcast patterns a training step has: a bias along the minor dimension, a row statistic
// along the middle one, a scalar, both operands broadcast, and a broadcast lhs.
}  // namespace
}  // namespace alpa::kernels
