// reduce-precision and topk. Expected values are worked out by hand from XLA's definitions (see
// src/interp/reduce_precision.cc and sort.cc); the bit arithmetic is in the comments. Notation:
// for an f32 x, bits(x) is its IEEE encoding; keeping M of the 23 mantissa bits drops s = 23 - M
// bits and rounds to nearest even, a tie being exactly half a unit of the last kept bit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One reduce-precision of `type` with attributes E, M on parameter 0.
std::string ReducePrecisionHlo(const std::string& type, int exponent_bits, int mantissa_bits) {
  return "HloModule m\nENTRY e {\n  p = " + type + " parameter(0)\n  ROOT rp = " + type +
         " reduce-precision(p), exponent_bits=" + std::to_string(exponent_bits) +
         ", mantissa_bits=" + std::to_string(mantissa_bits) + "\n}";
}

TEST(ReducePrecisionTest, F32ToBf16RoundsToNearestEven) {
  // (8, 7) keeps f32's exponent and 7 mantissa bits: s = 16, one unit of the last kept bit at 1.x
  // is 2^-7, half a unit 2^-8.
  //   1 + 2^-8: bits 0x3F808000, a tie; kept bit 16 is 0 (even), so down to 1.
  //   1 + 3*2^-8: bits 0x3F818000, a tie; kept bit 16 is 1 (odd), so up to 1 + 2^-6.
  //   1 + 2^-8 + 2^-20: just above the tie, so up to 1 + 2^-7.
  //   -(1 + 3*2^-8): the sign is untouched, -(1 + 2^-6).
  //   f32 pi 3.14159274 = bits 0x40490FDB: dropped 0x0FDB < 0x8000, so 0x40490000 = 3.140625.
  ir::Literal r = MustRunHlo(ReducePrecisionHlo("f32[5]", 8, 7),
                             {Vals(DType::kF32, {5},
                                   {1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8),
                                    1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20),
                                    -(1 + 3 * std::ldexp(1.0, -8)), 3.14159274101257324})});
  EXPECT_EQ(AsDoubles(r),
            (std::vector<double>{1.0, 1 + std::ldexp(1.0, -6), 1 + std::ldexp(1.0, -7),
                                 -(1 + std::ldexp(1.0, -6)), 3.140625}));
}

TEST(ReducePrecisionTest, F16RangeOverflowsToInfinity) {
  // (5, 10) is f16 on f32: the largest finite value is (2 - 2^-10) * 2^15 = 65504.
  //   70000 ~ 1.07 * 2^16: biased exponent 127 + 16 > 127 + 15, so inf; -70000 gives -inf.
  //   65504 fits exactly (11 significant bits) and stays.
  //   65520 = (2 - 2^-11) * 2^15 is the tie between 65504 (odd last bit) and 2^16, so it rounds
  //   up to 2^16 first, whose exponent then overflows: inf.
  ir::Literal r = MustRunHlo(ReducePrecisionHlo("f32[4]", 5, 10),
                             {Vals(DType::kF32, {4}, {70000, -70000, 65504, 65520})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{kInf, -kInf, 65504, kInf}));
}

TEST(ReducePrecisionTest, UnderflowFlushesToSignedZero) {
  // (5, 10) on f32: exponent bias 127, reduced bias 15, so a biased exponent <= 127 - 15 = 112
  // (|x| < 2^-14, f16's denormal range included) flushes to a zero of x's sign.
  //   2^-14 (f16's smallest normal): exponent 113, kept.
  //   2^-15 (an f16 denormal): exponent 112, flushed to 0, unlike an IEEE conversion.
  //   -2^-20: flushed to -0.   1e-8: flushed to 0.
  ir::Literal r =
      MustRunHlo(ReducePrecisionHlo("f32[4]", 5, 10),
                 {Vals(DType::kF32, {4},
                       {std::ldexp(1.0, -14), std::ldexp(1.0, -15), -std::ldexp(1.0, -20), 1e-8})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{std::ldexp(1.0, -14), 0, 0, 0}));
  EXPECT_FALSE(std::signbit(r.GetDouble(1)));
  EXPECT_TRUE(std::signbit(r.GetDouble(2)));
}

TEST(ReducePrecisionTest, NaNStaysNaNUnlessNoMantissaBitIsLeft) {
  // With M > 0 a NaN passes through unchanged (its rounding could otherwise carry into the
  // exponent), and +-inf keep their all-ones exponent.
  ir::Literal r = MustRunHlo(ReducePrecisionHlo("f32[3]", 5, 10),
                             {Vals(DType::kF32, {3}, {kNaN, -kInf, kInf})});
  EXPECT_TRUE(std::isnan(r.GetDouble(0)));
  EXPECT_EQ(r.GetDouble(1), -kInf);
  EXPECT_EQ(r.GetDouble(2), kInf);
  // With M = 0 NaN cannot be told from inf and becomes +inf, as in XLA. The other values keep
  // only powers of two; s = 23 reaches the exponent's lowest bit, which decides the ties:
  //   1.5 = bits 0x3FC00000, exponent 127 (odd) so the tie goes up: 2.
  //   3 = bits 0x40400000, exponent 128 (even) so the tie goes down: 2.
  r = MustRunHlo(ReducePrecisionHlo("f32[3]", 8, 0), {Vals(DType::kF32, {3}, {kNaN, 1.5, 3})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{kInf, 2, 2}));
}

TEST(ReducePrecisionTest, F16RoundsOnItsOwnBits) {
  // (5, 2) on f16: s = 10 - 2 = 8, half a unit of the last kept bit at 1.x is 2^-3.
  //   1.125 = bits 0x3C80, a tie; kept bit 8 is 0, so 1.
  //   1.375 = bits 0x3D80, a tie; kept bit 8 is 1, so up to 0x3E00 = 1.5.
  //   -1.375 -> -1.5.
  ir::Literal r = MustRunHlo(ReducePrecisionHlo("f16[3]", 5, 2),
                             {Vals(DType::kF16, {3}, {1.125, 1.375, -1.375})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{1, 1.5, -1.5}));
  // (5, 9) on f16: E equals f16's exponent width, so f16 denormals are rounded, not flushed.
  //   3 * 2^-24 = bits 0x0003, a tie with s = 1; kept bit 1 is 1, so up to 0x0004 = 2^-22.
  r = MustRunHlo(ReducePrecisionHlo("f16[1]", 5, 9),
                 {Vals(DType::kF16, {1}, {3 * std::ldexp(1.0, -24)})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{std::ldexp(1.0, -22)}));
}

TEST(ReducePrecisionTest, F64ToF32Format) {
  // (8, 23) on f64 is f32 rounding with flushed denormals: s = 52 - 23 = 29.
  //   1 + 2^-24: a tie, kept bit even, so 1.   1 + 3*2^-24: a tie, kept bit odd, so 1 + 2^-22.
  //   1e39 > f32's max 3.4e38: inf.   1e-40 (an f32 denormal, < 2^-126): flushed to 0.
  ir::Literal r =
      MustRunHlo(ReducePrecisionHlo("f64[4]", 8, 23),
                 {Vals(DType::kF64, {4},
                       {1 + std::ldexp(1.0, -24), 1 + 3 * std::ldexp(1.0, -24), 1e39, 1e-40})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{1, 1 + std::ldexp(1.0, -22), kInf, 0}));
}

TEST(ReducePrecisionTest, MoreBitsThanTheTypeKeepTheValue) {
  // bf16 stores 8 exponent and 7 mantissa bits; asking for more changes nothing (XLA).
  //   1 + 2^-7 needs all 7 mantissa bits; 3e38 needs the top of the exponent range.
  ir::Literal r = MustRunHlo(ReducePrecisionHlo("bf16[2]", 11, 10),
                             {Vals(DType::kBF16, {2}, {1 + std::ldexp(1.0, -7), -3e38})});
  const ir::Literal expected = Vals(DType::kBF16, {2}, {1 + std::ldexp(1.0, -7), -3e38});
  EXPECT_EQ(AsDoubles(r), AsDoubles(expected));
}

TEST(ReducePrecisionTest, NoExponentBitsIsAnErrorNamingTheInstruction) {
  Result<ir::Literal> r =
      RunHlo(ReducePrecisionHlo("f32[2]", 0, 10), {Vals(DType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("%rp (reduce-precision)"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("exponent_bits >= 1"), std::string::npos)
      << r.status().message();
}

// ---------------------------------------------------------------------------------------------
// topk: (values, s32 indices) of the k largest (or smallest) along the last dimension.

std::string TopKHlo(const std::string& in, const std::string& out, int k, bool largest) {
  return "HloModule m\nENTRY e {\n  p = " + in + " parameter(0)\n  ROOT t = (" + out +
         ") topk(p), k=" + std::to_string(k) + ", largest=" + (largest ? "true" : "false") + "\n}";
}

TEST(TopKTest, OneDimensionalLargest) {
  // {3, 1, 4, 1, 5}: the three largest, descending, are 5 (index 4), 4 (2), 3 (0).
  ir::Literal r = MustRunHlo(TopKHlo("f32[5]", "f32[3], s32[3]", 3, true),
                             {Vals(DType::kF32, {5}, {3, 1, 4, 1, 5})});
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{5, 4, 3}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{4, 2, 0}));
}

TEST(TopKTest, TiesKeepTheLowerIndexFirst) {
  // {2, 7, 2, 7, 0, 7}: the 7s at 1, 3, 5 in index order, then the first 2 (index 0).
  ir::Literal r = MustRunHlo(TopKHlo("s32[6]", "s32[4], s32[4]", 4, true),
                             {Ints(DType::kS32, {6}, {2, 7, 2, 7, 0, 7})});
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{7, 7, 7, 2}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 3, 5, 0}));
}

TEST(TopKTest, SmallestWhenLargestIsFalse) {
  // {3, 1, 4, 1, 5}: the two smallest, ascending, are the 1s at indices 1 and 3.
  ir::Literal r = MustRunHlo(TopKHlo("f32[5]", "f32[2], s32[2]", 2, false),
                             {Vals(DType::kF32, {5}, {3, 1, 4, 1, 5})});
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{1, 1}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 3}));
}

TEST(TopKTest, BatchedRowsAreIndependent) {
  // bf16[2,4], k=2 per row:
  //   row 0 {0.5, -1, 2, 2}: the 2s at 2 and 3.
  //   row 1 {-3, -2, -1, -4}: -1 (index 2), then -2 (index 1).
  ir::Literal r = MustRunHlo(TopKHlo("bf16[2,4]", "bf16[2,2], s32[2,2]", 2, true),
                             {Vals(DType::kBF16, {2, 4}, {0.5, -1, 2, 2, -3, -2, -1, -4})});
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{2, 2, -1, -2}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{2, 3, 2, 1}));
}

TEST(TopKTest, KEqualToTheDimensionSortsEveryRow) {
  // f32[2,3], k=3, ascending:
  //   row 0 {3, -1, 2} -> {-1, 2, 3} from indices {1, 2, 0}.
  //   row 1 {0, 0, -5} -> {-5, 0, 0} from indices {2, 0, 1} (the tied 0s in index order).
  ir::Literal r = MustRunHlo(TopKHlo("f32[2,3]", "f32[2,3], s32[2,3]", 3, false),
                             {Vals(DType::kF32, {2, 3}, {3, -1, 2, 0, 0, -5})});
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{-1, 2, 3, -5, 0, 0}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 2, 0, 2, 0, 1}));
}

TEST(TopKTest, NaNAndSignedZeroFollowTheTotalOrder) {
  // XLA compares with the total order: +NaN above +inf, -0 below +0.
  // {1, NaN, inf, +0, -0}: the three largest are NaN (1), inf (2), 1 (0).
  const ir::Literal in = Vals(DType::kF32, {5}, {1, kNaN, kInf, 0.0, -0.0});
  ir::Literal r = MustRunHlo(TopKHlo("f32[5]", "f32[3], s32[3]", 3, true), {in});
  EXPECT_TRUE(std::isnan(r.tuple_element(0).GetDouble(0)));
  EXPECT_EQ(r.tuple_element(0).GetDouble(1), kInf);
  EXPECT_EQ(r.tuple_element(0).GetDouble(2), 1);
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 2, 0}));
  // The two smallest are -0 (index 4) then +0 (index 3): not a tie kept in index order.
  r = MustRunHlo(TopKHlo("f32[5]", "f32[2], s32[2]", 2, false), {in});
  EXPECT_TRUE(std::signbit(r.tuple_element(0).GetDouble(0)));
  EXPECT_FALSE(std::signbit(r.tuple_element(0).GetDouble(1)));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{4, 3}));
}

}  // namespace
}  // namespace alpa::interp::testing
