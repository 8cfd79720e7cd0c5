#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;
using ir::Opcode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

std::vector<int64_t> IntOp(Opcode opcode, DType dtype, std::vector<int64_t> a,
                           std::vector<int64_t> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  Result<ir::Literal> r =
      EvalOp(opcode, S(dtype, {n}), {Ints(dtype, {n}, a), Ints(dtype, {n}, b)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsInts(*r) : std::vector<int64_t>{};
}

std::vector<double> FloatOp(Opcode opcode, DType dtype, std::vector<double> a,
                            std::vector<double> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  Result<ir::Literal> r =
      EvalOp(opcode, S(dtype, {n}), {Vals(dtype, {n}, a), Vals(dtype, {n}, b)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsDoubles(*r) : std::vector<double>{};
}

std::vector<double> Unary(Opcode opcode, DType dtype, std::vector<double> a) {
  const int64_t n = static_cast<int64_t>(a.size());
  Result<ir::Literal> r = EvalOp(opcode, S(dtype, {n}), {Vals(dtype, {n}, a)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsDoubles(*r) : std::vector<double>{};
}

TEST(ElementwiseTest, FloatArithmetic) {
  EXPECT_EQ(FloatOp(Opcode::kAdd, DType::kF32, {1, 2.5}, {3, -0.5}), (std::vector<double>{4, 2}));
  EXPECT_EQ(FloatOp(Opcode::kDivide, DType::kF64, {1, -3}, {4, 2}),
            (std::vector<double>{0.25, -1.5}));
  EXPECT_EQ(FloatOp(Opcode::kRemainder, DType::kF32, {7, -7}, {3, 3}),
            (std::vector<double>{1, -1}));
  EXPECT_EQ(FloatOp(Opcode::kPower, DType::kF32, {2, 9}, {10, 0.5}),
            (std::vector<double>{1024, 3}));
}

TEST(ElementwiseTest, MaxMinPropagateNaN) {
  std::vector<double> max = FloatOp(Opcode::kMaximum, DType::kF32, {kNaN, 1, 2}, {1, kNaN, 3});
  EXPECT_TRUE(std::isnan(max[0]));
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(max[2], 3);
  std::vector<double> min = FloatOp(Opcode::kMinimum, DType::kF32, {kNaN, 5}, {1, -2});
  EXPECT_TRUE(std::isnan(min[0]));
  EXPECT_EQ(min[1], -2);
}

// f16 has 10 explicit mantissa bits: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 and rounds to
// the even mantissa (1); 1 + 3 * 2^-11 is a tie between 1 + 2^-10 and 1 + 2^-9, even is 1 + 2^-9.
TEST(ElementwiseTest, HalfRoundsEachOpToNearestEven) {
  const double e = std::ldexp(1.0, -11);
  EXPECT_EQ(FloatOp(Opcode::kAdd, DType::kF16, {1, 1}, {e, 3 * e}),
            (std::vector<double>{1, 1 + std::ldexp(1.0, -9)}));
  // bf16 has 7: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6.
  const double b = std::ldexp(1.0, -8);
  EXPECT_EQ(FloatOp(Opcode::kAdd, DType::kBF16, {1, 1}, {b, 3 * b}),
            (std::vector<double>{1, 1 + std::ldexp(1.0, -6)}));
  // 65504 is the largest f16; 65504 + 32 rounds to infinity.
  EXPECT_TRUE(std::isinf(FloatOp(Opcode::kAdd, DType::kF16, {65504}, {32})[0]));
}

TEST(ElementwiseTest, IntegerDivisionEdgeCases) {
  EXPECT_EQ(IntOp(Opcode::kDivide, DType::kS32, {7, -7, 7, 5, kInt32Min},
                  {2, 2, -2, 0, -1}),
            (std::vector<int64_t>{3, -3, -3, -1, kInt32Min}));
  EXPECT_EQ(IntOp(Opcode::kRemainder, DType::kS32, {7, -7, 7, 5, kInt32Min},
                  {2, 2, -2, 0, -1}),
            (std::vector<int64_t>{1, -1, 1, 5, 0}));
  // Unsigned x / 0 is all ones.
  EXPECT_EQ(IntOp(Opcode::kDivide, DType::kU32, {5, 9}, {0, 2}),
            (std::vector<int64_t>{4294967295, 4}));
  EXPECT_EQ(IntOp(Opcode::kRemainder, DType::kU8, {5}, {0}), (std::vector<int64_t>{5}));
}

TEST(ElementwiseTest, IntegerOverflowWraps) {
  EXPECT_EQ(IntOp(Opcode::kAdd, DType::kS8, {127, -128}, {1, -1}),
            (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(IntOp(Opcode::kMultiply, DType::kU16, {65535, 300}, {65535, 300}),
            (std::vector<int64_t>{1, 24464}));  // 90000 mod 65536 = 24464
  EXPECT_EQ(IntOp(Opcode::kSubtract, DType::kU8, {0}, {1}), (std::vector<int64_t>{255}));
}

TEST(ElementwiseTest, ShiftsByBitWidthOrMore) {
  EXPECT_EQ(IntOp(Opcode::kShiftLeft, DType::kS32, {1, 1, 1, 3}, {31, 32, -1, 2}),
            (std::vector<int64_t>{kInt32Min, 0, 0, 12}));
  EXPECT_EQ(IntOp(Opcode::kShiftRightArithmetic, DType::kS32, {-8, -8, 8, 8}, {1, 40, 40, 1}),
            (std::vector<int64_t>{-4, -1, 0, 4}));
  // -8 is 0xFFFFFFF8; logically shifted by 28 it is 0xF.
  EXPECT_EQ(IntOp(Opcode::kShiftRightLogical, DType::kS32, {-8, -8}, {28, 32}),
            (std::vector<int64_t>{15, 0}));
}

TEST(ElementwiseTest, IntegerPower) {
  EXPECT_EQ(IntOp(Opcode::kPower, DType::kS32, {2, -2, 2, 1, -1, 3}, {10, 3, -1, -3, -2, 0}),
            (std::vector<int64_t>{1024, -8, 0, 1, 0, 1}));
}

TEST(ElementwiseTest, Bitwise) {
  EXPECT_EQ(IntOp(Opcode::kAnd, DType::kU8, {12, 255}, {10, 1}), (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(IntOp(Opcode::kOr, DType::kU8, {12}, {10}), (std::vector<int64_t>{14}));
  EXPECT_EQ(IntOp(Opcode::kXor, DType::kPred, {1, 1, 0}, {1, 0, 0}),
            (std::vector<int64_t>{0, 1, 0}));
}

TEST(ElementwiseTest, UnaryFloat) {
  EXPECT_EQ(Unary(Opcode::kRoundNearestEven, DType::kF32, {2.5, 3.5, -2.5}),
            (std::vector<double>{2, 4, -2}));
  EXPECT_EQ(Unary(Opcode::kRoundNearestAfz, DType::kF32, {2.5, -2.5, 0.4}),
            (std::vector<double>{3, -3, 0}));
  EXPECT_EQ(Unary(Opcode::kSign, DType::kF32, {-3, 0, 7}), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(Unary(Opcode::kRsqrt, DType::kF64, {4, 16}), (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(Unary(Opcode::kLogistic, DType::kF64, {0}), (std::vector<double>{0.5}));
  EXPECT_EQ(Unary(Opcode::kFloor, DType::kBF16, {-1.5, 1.5}), (std::vector<double>{-2, 1}));
  EXPECT_EQ(Unary(Opcode::kExp, DType::kF64, {0}), (std::vector<double>{1}));
}

TEST(ElementwiseTest, UnaryInteger) {
  EXPECT_EQ(Unary(Opcode::kAbs, DType::kS32, {-5, static_cast<double>(kInt32Min)}),
            (std::vector<double>{5, static_cast<double>(kInt32Min)}));
  EXPECT_EQ(Unary(Opcode::kNegate, DType::kS8, {-128, 5}), (std::vector<double>{-128, -5}));
  EXPECT_EQ(Unary(Opcode::kPopulationCount, DType::kS32, {7, -1}), (std::vector<double>{3, 32}));
  EXPECT_EQ(Unary(Opcode::kClz, DType::kS32, {1, 0, -1}), (std::vector<double>{31, 32, 0}));
  EXPECT_EQ(Unary(Opcode::kNot, DType::kPred, {1, 0}), (std::vector<double>{0, 1}));
  EXPECT_EQ(Unary(Opcode::kNot, DType::kU8, {0, 15}), (std::vector<double>{255, 240}));
}

TEST(ElementwiseTest, IsFiniteGivesPred) {
  Result<ir::Literal> r = EvalOp(Opcode::kIsFinite, S(DType::kPred, {3}),
                                 {Vals(DType::kF32, {3}, {1, kNaN, INFINITY})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsInts(*r), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ElementwiseTest, ComplexAbsAndParts) {
  ir::Literal z = ir::Literal::CreateZeros(S(DType::kC64, {1}));
  z.SetComplex(0, {3, -4});
  Result<ir::Literal> abs = EvalOp(Opcode::kAbs, S(DType::kF32, {1}), {z});
  ASSERT_TRUE(abs.ok()) << abs.status().ToString();
  EXPECT_EQ(AsDoubles(*abs), (std::vector<double>{5}));
  Result<ir::Literal> imag = EvalOp(Opcode::kImag, S(DType::kF32, {1}), {z});
  ASSERT_TRUE(imag.ok());
  EXPECT_EQ(AsDoubles(*imag), (std::vector<double>{-4}));
  Result<ir::Literal> product = EvalOp(Opcode::kMultiply, S(DType::kC64, {1}), {z, z});
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->GetComplex(0), std::complex<double>(-7, -24));  // (3-4i)^2
}

TEST(ElementwiseTest, UndefinedTypeIsAnErrorNamingTheInstruction) {
  Result<ir::Literal> r = EvalOp(Opcode::kShiftLeft, S(DType::kF32, {1}),
                                 {Vals(DType::kF32, {1}, {1}), Vals(DType::kF32, {1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("%v2 (shift-left) in computation entry"), std::string::npos)
      << r.status().message();
}

TEST(ElementwiseTest, MismatchedShapesAreAnError) {
  Result<ir::Literal> r = EvalOp(Opcode::kAdd, S(DType::kF32, {2}),
                                 {Vals(DType::kF32, {2}, {1, 2}), Vals(DType::kF32, {1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace alpa::interp::testing
