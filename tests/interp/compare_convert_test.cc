#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;
using ir::Opcode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> Compare(ir::ComparisonDirection direction, ir::ComparisonType type,
                             DType dtype, std::vector<double> a, std::vector<double> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  Result<ir::Literal> r =
      EvalOp(Opcode::kCompare, S(DType::kPred, {n}), {Vals(dtype, {n}, a), Vals(dtype, {n}, b)},
             [&](ir::Attributes& attributes) {
               attributes.comparison_direction = direction;
               attributes.comparison_type = type;
             });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsInts(*r) : std::vector<int64_t>{};
}

std::vector<double> Convert(DType from, DType to, std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Result<ir::Literal> r = EvalOp(Opcode::kConvert, S(to, {n}), {Vals(from, {n}, values)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsDoubles(*r) : std::vector<double>{};
}

TEST(CompareTest, FloatPartialOrder) {
  using ir::ComparisonDirection;
  using ir::ComparisonType;
  EXPECT_EQ(Compare(ComparisonDirection::kLt, ComparisonType::kDefault, DType::kF32,
                    {1, 2, kNaN, -0.0}, {2, 2, 1, 0.0}),
            (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Compare(ComparisonDirection::kNe, ComparisonType::kDefault, DType::kF32, {kNaN},
                    {kNaN}),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(Compare(ComparisonDirection::kGe, ComparisonType::kDefault, DType::kS32, {3, -1},
                    {3, 0}),
            (std::vector<int64_t>{1, 0}));
}

// TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +inf < NaN.
TEST(CompareTest, FloatTotalOrder) {
  using ir::ComparisonDirection;
  using ir::ComparisonType;
  EXPECT_EQ(Compare(ComparisonDirection::kLt, ComparisonType::kTotalOrder, DType::kF32,
                    {-0.0, 1, INFINITY, -1}, {0.0, kNaN, kNaN, -0.0}),
            (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(Compare(ComparisonDirection::kEq, ComparisonType::kTotalOrder, DType::kBF16,
                    {kNaN, -0.0}, {kNaN, 0.0}),
            (std::vector<int64_t>{1, 0}));
}

TEST(ConvertTest, FloatToIntTruncatesAndSaturates) {
  EXPECT_EQ(Convert(DType::kF32, DType::kS32, {3.7, -3.7, 1e10, -1e10, kNaN}),
            (std::vector<double>{3, -3, 2147483647, -2147483648.0, 0}));
  EXPECT_EQ(Convert(DType::kF32, DType::kU8, {-5, 300, 254.9}), (std::vector<double>{0, 255, 254}));
}

TEST(ConvertTest, IntToIntWrapsAndToPredIsNonZero) {
  EXPECT_EQ(Convert(DType::kS32, DType::kS8, {300, -129}), (std::vector<double>{44, 127}));
  EXPECT_EQ(Convert(DType::kF32, DType::kPred, {0.5, 0, -0.0}), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(Convert(DType::kPred, DType::kF16, {1, 0}), (std::vector<double>{1, 0}));
}

// f64 -> f16 must round once: 1 + 2^-11 + 2^-30 is just above the tie between 1 and 1 + 2^-10,
// so it rounds up; through a round-to-nearest f32 (1 + 2^-11, a tie) it would round down to 1.
TEST(ConvertTest, DoubleToHalfRoundsOnce) {
  const double x = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  EXPECT_EQ(Convert(DType::kF64, DType::kF16, {x}), (std::vector<double>{1 + std::ldexp(1.0, -10)}));
  EXPECT_EQ(Convert(DType::kF32, DType::kBF16, {1 + std::ldexp(1.0, -8)}),
            (std::vector<double>{1}));
}

TEST(ConvertTest, BitcastConvertKeepsBits) {
  Result<ir::Literal> r = EvalOp(Opcode::kBitcastConvert, S(DType::kS32, {2}),
                                 {Vals(DType::kF32, {2}, {1.0, -2.0})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsInts(*r), (std::vector<int64_t>{0x3F800000, static_cast<int32_t>(0xC0000000)}));
  // To a narrower type a minor dimension appears: f32 1.0 is bytes 00 00 80 3F (little endian).
  Result<ir::Literal> bytes =
      EvalOp(Opcode::kBitcastConvert, S(DType::kU8, {1, 4}), {Vals(DType::kF32, {1}, {1.0})});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(AsInts(*bytes), (std::vector<int64_t>{0, 0, 0x80, 0x3F}));
}

TEST(SelectTest, PerElementAndScalarPredicate) {
  Result<ir::Literal> r = EvalOp(
      Opcode::kSelect, S(DType::kS32, {3}),
      {Ints(DType::kPred, {3}, {1, 0, 1}), Ints(DType::kS32, {3}, {1, 2, 3}),
       Ints(DType::kS32, {3}, {10, 20, 30})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsInts(*r), (std::vector<int64_t>{1, 20, 3}));
  Result<ir::Literal> scalar =
      EvalOp(Opcode::kSelect, S(DType::kF32, {2}),
             {Ints(DType::kPred, {}, {0}), Vals(DType::kF32, {2}, {1, 2}),
              Vals(DType::kF32, {2}, {5, 6})});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(AsDoubles(*scalar), (std::vector<double>{5, 6}));
}

TEST(ClampTest, ScalarAndArrayBounds) {
  Result<ir::Literal> r =
      EvalOp(Opcode::kClamp, S(DType::kF32, {4}),
             {Vals(DType::kF32, {}, {0}), Vals(DType::kF32, {4}, {-1, 0.5, 2, 7}),
              Vals(DType::kF32, {4}, {1, 1, 1, 5})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsDoubles(*r), (std::vector<double>{0, 0.5, 1, 5}));
}

}  // namespace
}  // namespace alpa::interp::testing
