// Interpreter values of the opcodes the other interp tests leave out: the transcendental and
// rounding unary ops, atan2 and complex, map, fusion, tokens, async copies, dimension-size
// queries, domain and collective-broadcast. Expected values are worked out by hand from XLA's
// operation semantics; the arithmetic is in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;
using ir::Opcode;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;

// `opcode` applied to a vector of `dtype` values, read back as doubles.
std::vector<double> Unary(Opcode opcode, DType dtype, std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  Result<ir::Literal> r = EvalOp(opcode, S(dtype, {n}), {Vals(dtype, {n}, values)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? AsDoubles(*r) : std::vector<double>(values.size(), -12345);
}

ir::Literal Complex(DType dtype, std::vector<std::complex<double>> values) {
  ir::Literal literal = ir::Literal::CreateZeros(S(dtype, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    literal.SetComplex(static_cast<int64_t>(i), values[i]);
  }
  return literal;
}

// Expects `actual` to equal `expected` element by element, NaN matching NaN and the sign of
// zero (and of infinity) mattering; finite values within `tolerance`.
void ExpectValues(const std::vector<double>& actual, const std::vector<double>& expected,
                  double tolerance = 0) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("element " + std::to_string(i));
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << actual[i];
    } else if (std::isinf(expected[i]) || expected[i] == 0) {
      EXPECT_EQ(actual[i], expected[i]);
      EXPECT_EQ(std::signbit(actual[i]), std::signbit(expected[i])) << actual[i];
    } else {
      EXPECT_NEAR(actual[i], expected[i], tolerance);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Unary ops on real floats.

TEST(FloatUnaryTest, RoundingOpsKeepTheSignOfZero) {
  // ceil(-0.2) is -0 and ceil(1.2) is 2; floor(-0.5) is -1.
  ExpectValues(Unary(Opcode::kCeil, DType::kF64, {-1.5, 1.2, -0.2, kInf}), {-1, 2, -0.0, kInf});
  ExpectValues(Unary(Opcode::kFloor, DType::kF32, {-0.5, 0.5, kNaN}), {-1, 0, kNaN});
  // Ties: to even gives 0, 2, -0; away from zero gives 1, 2, -1.
  ExpectValues(Unary(Opcode::kRoundNearestEven, DType::kF64, {0.5, 1.5, -0.5}), {0, 2, -0.0});
  ExpectValues(Unary(Opcode::kRoundNearestAfz, DType::kF64, {0.5, 1.5, -0.5}), {1, 2, -1});
}

TEST(FloatUnaryTest, SignAbsAndNegateHandleZeroAndNaN) {
  // sign is -1 / +1 off zero, and passes +-0 and NaN through.
  ExpectValues(Unary(Opcode::kSign, DType::kF32, {-3, -0.0, 0, kNaN, kInf}),
               {-1, -0.0, 0, kNaN, 1});
  ExpectValues(Unary(Opcode::kAbs, DType::kF64, {-2.5, -0.0, -kInf}), {2.5, 0, kInf});
  ExpectValues(Unary(Opcode::kNegate, DType::kBF16, {0, -2.5}), {-0.0, 2.5});
  // On integers sign is -1, 0 or 1.
  EXPECT_EQ(
      AsInts(*EvalOp(Opcode::kSign, S(DType::kS32, {3}), {Ints(DType::kS32, {3}, {-5, 0, 7})})),
      (std::vector<int64_t>{-1, 0, 1}));
}

TEST(FloatUnaryTest, RootsAndReciprocalRoots) {
  // cbrt(27) = 3, cbrt(-8) = -2 (cube roots of negatives are real); sqrt(2.25) = 1.5,
  // sqrt(-1) is NaN, sqrt(-0) = -0; rsqrt(0.25) = 1 / 0.5 = 2, rsqrt(0) = +inf.
  ExpectValues(Unary(Opcode::kCbrt, DType::kF64, {27, -8, 0}), {3, -2, 0}, 1e-15);
  ExpectValues(Unary(Opcode::kSqrt, DType::kF32, {2.25, -1, -0.0}), {1.5, kNaN, -0.0});
  ExpectValues(Unary(Opcode::kRsqrt, DType::kF64, {0.25, 0}), {2, kInf});
}

TEST(FloatUnaryTest, ExponentialsAndLogarithms) {
  // log(1) = 0, log(e) = 1, log(0) = -inf, log(-1) is NaN.
  ExpectValues(Unary(Opcode::kLog, DType::kF64, {1, std::numbers::e, 0, -1}), {0, 1, -kInf, kNaN},
               1e-15);
  // For tiny x, expm1(x) = x + x^2/2 and log1p(x) = x - x^2/2 to double precision:
  // 1e-10 +- 5e-21. exp(x) - 1 would be off by ~8e-18 (the rounding of exp(1e-10) near 1).
  ExpectValues(Unary(Opcode::kExpm1, DType::kF64, {1e-10, -kInf}), {1.00000000005e-10, -1}, 1e-25);
  // expm1(ln 2) = 2 - 1 = 1.
  ExpectValues(Unary(Opcode::kExpm1, DType::kF64, {std::numbers::ln2}), {1}, 1e-15);
  ExpectValues(Unary(Opcode::kLog1p, DType::kF64, {1e-10, -1}), {9.9999999995e-11, -kInf}, 1e-25);
  // exp(1) rounded to f32 is 2.71828174591064453125 (0x402DF854).
  ExpectValues(Unary(Opcode::kExp, DType::kF32, {1, -kInf}), {2.71828174591064453125, 0});
}

TEST(FloatUnaryTest, LogisticAndTanhSaturate) {
  // logistic(ln 3) = 1 / (1 + 1/3) = 0.75; at +-1000 it is 1 and 0 without overflow to NaN.
  ExpectValues(Unary(Opcode::kLogistic, DType::kF64, {std::log(3.0), 1000, -1000}), {0.75, 1, 0},
               1e-15);
  // tanh(ln 3) = (e^(2 ln 3) - 1) / (e^(2 ln 3) + 1) = (9 - 1) / (9 + 1) = 0.8; tanh(-0) = -0.
  ExpectValues(Unary(Opcode::kTanh, DType::kF64, {std::log(3.0), 50, -0.0}), {0.8, 1, -0.0}, 1e-15);
}

TEST(FloatUnaryTest, TrigonometryAndErf) {
  // sin(pi/2) = 1, sin(-pi/6) = -1/2; cos(0) = 1, cos(pi) = -1; tan(pi/4) = 1, tan(-pi/4) = -1.
  ExpectValues(Unary(Opcode::kSin, DType::kF64, {kPi / 2, -kPi / 6}), {1, -0.5}, 1e-15);
  ExpectValues(Unary(Opcode::kCos, DType::kF64, {0, kPi}), {1, -1}, 1e-15);
  ExpectValues(Unary(Opcode::kTan, DType::kF64, {kPi / 4, -kPi / 4}), {1, -1}, 1e-15);
  // erf(1) = 0.8427007929497149 (tables); erf is odd and tends to +-1.
  ExpectValues(Unary(Opcode::kErf, DType::kF64, {0, 1, -1, -kInf}),
               {0, 0.8427007929497149, -0.8427007929497149, -1}, 1e-15);
}

TEST(FloatUnaryTest, RealAndImagOfARealFloat) {
  // A real number is its own real part; its imaginary part is 0.
  ExpectValues(Unary(Opcode::kReal, DType::kF32, {2.5, -1}), {2.5, -1});
  ExpectValues(Unary(Opcode::kImag, DType::kF64, {2.5, -1}), {0, 0});
}

TEST(FloatUnaryTest, EmptyOperandGivesEmptyResult) {
  Result<ir::Literal> r =
      EvalOp(Opcode::kSqrt, S(DType::kF32, {0, 4}), {Vals(DType::kF32, {0, 4}, {})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape().dims(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(r->element_count(), 0);
}

// ---------------------------------------------------------------------------------------------
// Complex unary ops.

TEST(ComplexUnaryTest, PrincipalBranches) {
  // exp(i pi) = -1; sqrt(-4) = 2i (principal root); log(-1) = i pi; sign(3 - 4i) = (3 - 4i) / 5;
  // real(3 - 4i) = 3; negate(1 + 2i) = -1 - 2i.
  const ir::Literal z = Complex(DType::kC128, {{0, kPi}, {-4, 0}, {-1, 0}, {3, -4}});
  auto run = [&](Opcode opcode, DType dtype) {
    Result<ir::Literal> r = EvalOp(opcode, S(dtype, {4}), {z});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ir::Literal();
  };
  ir::Literal exp = run(Opcode::kExp, DType::kC128);
  EXPECT_NEAR(std::abs(exp.GetComplex(0) - std::complex<double>(-1, 0)), 0, 1e-15);
  ir::Literal sqrt = run(Opcode::kSqrt, DType::kC128);
  EXPECT_NEAR(std::abs(sqrt.GetComplex(1) - std::complex<double>(0, 2)), 0, 1e-15);
  ir::Literal log = run(Opcode::kLog, DType::kC128);
  EXPECT_NEAR(std::abs(log.GetComplex(2) - std::complex<double>(0, kPi)), 0, 1e-15);
  ir::Literal sign = run(Opcode::kSign, DType::kC128);
  EXPECT_NEAR(std::abs(sign.GetComplex(3) - std::complex<double>(0.6, -0.8)), 0, 1e-15);
  EXPECT_EQ(AsDoubles(run(Opcode::kReal, DType::kF64)), (std::vector<double>{0, -4, -1, 3}));
  Result<ir::Literal> negated =
      EvalOp(Opcode::kNegate, S(DType::kC64, {1}), {Complex(DType::kC64, {{1, 2}})});
  ASSERT_TRUE(negated.ok()) << negated.status().ToString();
  EXPECT_EQ(negated->GetComplex(0), std::complex<double>(-1, -2));
}

// ---------------------------------------------------------------------------------------------
// atan2, complex and complex arithmetic.

TEST(BinaryCoverageTest, Atan2PicksTheQuadrantFromBothSigns) {
  // atan2(y, x): (1, 1) -> pi/4, (1, -1) -> 3pi/4, (-1, 0) -> -pi/2, (+0, -1) -> pi,
  // (-0, -1) -> -pi (the sign of a zero y picks the side of the branch cut).
  const std::vector<double> y{1, 1, -1, 0, -0.0};
  const std::vector<double> x{1, -1, 0, -1, -1};
  Result<ir::Literal> r = EvalOp(Opcode::kAtan2, S(DType::kF64, {5}),
                                 {Vals(DType::kF64, {5}, y), Vals(DType::kF64, {5}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectValues(AsDoubles(*r), {kPi / 4, 3 * kPi / 4, -kPi / 2, kPi, -kPi}, 1e-15);
}

TEST(BinaryCoverageTest, ComplexBuildsFromRealAndImaginaryParts) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  re = f32[2] parameter(0)
  im = f32[2] parameter(1)
  ROOT z = c64[2] complex(re, im)
})",
                             {Vals(DType::kF32, {2}, {1, -2}), Vals(DType::kF32, {2}, {3, 0.5})});
  EXPECT_EQ(r.GetComplex(0), std::complex<double>(1, 3));
  EXPECT_EQ(r.GetComplex(1), std::complex<double>(-2, 0.5));
}

TEST(BinaryCoverageTest, ComplexArithmetic) {
  // (1 + 2i) / (3 - 4i) = (1 + 2i)(3 + 4i) / 25 = (3 + 4i + 6i - 8) / 25 = -0.2 + 0.4i;
  // (1 + 2i) - (3 - 4i) = -2 + 6i.
  const ir::Literal a = Complex(DType::kC128, {{1, 2}});
  const ir::Literal b = Complex(DType::kC128, {{3, -4}});
  Result<ir::Literal> quotient = EvalOp(Opcode::kDivide, S(DType::kC128, {1}), {a, b});
  ASSERT_TRUE(quotient.ok()) << quotient.status().ToString();
  EXPECT_NEAR(std::abs(quotient->GetComplex(0) - std::complex<double>(-0.2, 0.4)), 0, 1e-15);
  Result<ir::Literal> difference = EvalOp(Opcode::kSubtract, S(DType::kC128, {1}), {a, b});
  ASSERT_TRUE(difference.ok()) << difference.status().ToString();
  EXPECT_EQ(difference->GetComplex(0), std::complex<double>(-2, 6));
}

TEST(BinaryCoverageTest, UnsignedMaximumAndMinimumCompareAsUnsigned) {
  // 0xFFFFFFFF is the largest u32, not -1.
  Result<ir::Literal> max =
      EvalOp(Opcode::kMaximum, S(DType::kU32, {2}),
             {Ints(DType::kU32, {2}, {4294967295, 3}), Ints(DType::kU32, {2}, {1, 7})});
  ASSERT_TRUE(max.ok()) << max.status().ToString();
  EXPECT_EQ(AsInts(*max), (std::vector<int64_t>{4294967295, 7}));
  Result<ir::Literal> min =
      EvalOp(Opcode::kMinimum, S(DType::kS8, {2}),
             {Ints(DType::kS8, {2}, {-128, 3}), Ints(DType::kS8, {2}, {1, -7})});
  ASSERT_TRUE(min.ok()) << min.status().ToString();
  EXPECT_EQ(AsInts(*min), (std::vector<int64_t>{-128, -7}));
}

// ---------------------------------------------------------------------------------------------
// map and fusion run a computation.

TEST(MapTest, AppliesTheComputationToEachElementTuple) {
  // f(a, b) = a * b + 1: (1,5) -> 6, (2,6) -> 13, (3,-1) -> -2, (4,0) -> 1.
  ir::Literal r = MustRunHlo(
      R"(
HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ab = f32[] multiply(a, b)
  one = f32[] constant(1)
  ROOT r = f32[] add(ab, one)
}
ENTRY e {
  x = f32[2,2] parameter(0)
  y = f32[2,2] parameter(1)
  ROOT m = f32[2,2] map(x, y), dimensions={0,1}, to_apply=f
})",
      {Vals(DType::kF32, {2, 2}, {1, 2, 3, 4}), Vals(DType::kF32, {2, 2}, {5, 6, -1, 0})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{6, 13, -2, 1}));
}

TEST(MapTest, ResultTakesTheComputationsElementType) {
  // is_positive(x) = x > 0 maps s32 to pred: {-1, 0, 2} -> {0, 0, 1}. An empty operand maps to
  // an empty result without calling the computation.
  auto with_n = [](const std::string& n) {
    return R"(
HloModule m
is_positive {
  x = s32[] parameter(0)
  zero = s32[] constant(0)
  ROOT gt = pred[] compare(x, zero), direction=GT
}
ENTRY e {
  x = s32[)" +
           n + R"(] parameter(0)
  ROOT m = pred[)" +
           n + R"(] map(x), dimensions={0}, to_apply=is_positive
})";
  };
  EXPECT_EQ(AsInts(MustRunHlo(with_n("3"), {Ints(DType::kS32, {3}, {-1, 0, 2})})),
            (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(MustRunHlo(with_n("0"), {Ints(DType::kS32, {0}, {})}).element_count(), 0);
}

TEST(FusionTest, RunsTheFusedComputation) {
  // (a - b)^2 with a = {1, 5, -2}, b = {4, 5, 1}: a - b = {-3, 0, -3} -> {9, 0, 9}.
  ir::Literal r =
      MustRunHlo(R"(
HloModule m
fused {
  p0 = f32[3] parameter(0)
  p1 = f32[3] parameter(1)
  d = f32[3] subtract(p0, p1)
  ROOT sq = f32[3] multiply(d, d)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT f = f32[3] fusion(a, b), kind=kLoop, calls=fused
})",
                 {Vals(DType::kF32, {3}, {1, 5, -2}), Vals(DType::kF32, {3}, {4, 5, 1})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{9, 0, 9}));
}

// ---------------------------------------------------------------------------------------------
// Ops with no numerics: they pass values through or produce the right shape.

TEST(PassThroughTest, TokensOrderValuesWithoutChangingThem) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  t0 = token[] after-all()
  t1 = token[] after-all(t0, t0)
  d = f32[2] add-dependency(p, t1)
  ROOT r = (f32[2], token[]) tuple(d, t1)
})",
                             {Vals(DType::kF32, {2}, {1.5, -3})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{1.5, -3}));
  EXPECT_TRUE(r.tuple_element(1).shape().IsToken());
}

TEST(PassThroughTest, CopyStartAndDoneCarryTheValue) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[3] parameter(0)
  cs = (s32[3], s32[3], u32[]) copy-start(p)
  ROOT cd = s32[3] copy-done(cs)
})",
                             {Ints(DType::kS32, {3}, {4, -5, 6})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{4, -5, 6}));
}

TEST(PassThroughTest, AsyncUpdatePassesTheStartedValueToDone) {
  // The wrapped computation negates: {1, -2} -> {-1, 2}; async-update changes nothing.
  ir::Literal r = MustRunHlo(R"(
HloModule m
wrapped {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  s = ((f32[2]), f32[2]) async-start(p), calls=wrapped
  u = ((f32[2]), f32[2]) async-update(s), calls=wrapped
  ROOT d = f32[2] async-done(u), calls=wrapped
})",
                             {Vals(DType::kF32, {2}, {1, -2})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{-1, 2}));
}

TEST(PassThroughTest, DomainIsTheIdentity) {
  Result<ir::Literal> r =
      EvalOp(Opcode::kDomain, S(DType::kS32, {2, 2}), {Ints(DType::kS32, {2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsInts(*r), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(PassThroughTest, CollectiveBroadcastOfOneDeviceKeepsItsValue) {
  const char* kText = R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT b = f32[3] collective-broadcast(p), replica_groups=GROUPS
})";
  auto text = [&](const std::string& groups) {
    std::string t = kText;
    return t.replace(t.find("GROUPS"), 6, groups);
  };
  const std::vector<ir::Literal> args{Vals(DType::kF32, {3}, {1, 2, -3})};
  EXPECT_EQ(AsDoubles(MustRunHlo(text("{{0}}"), args)), (std::vector<double>{1, 2, -3}));
  // Two devices would need the other device's value: an error, not a guess.
  Result<ir::Literal> two = RunHlo(text("{{0,1}}"), args);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("%b"), std::string::npos) << two.status().message();
}

TEST(DimensionSizeTest, GetDimensionSizeReadsTheStaticSize) {
  // f32[2,3,0]: dimension 1 has 3 elements, dimension 2 none.
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2,3,0] parameter(0)
  d1 = s32[] get-dimension-size(p), dimensions={1}
  d2 = s32[] get-dimension-size(p), dimensions={2}
  ROOT t = (s32[], s32[]) tuple(d1, d2)
})",
                             {Vals(DType::kF32, {2, 3, 0}, {})});
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{3}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{0}));
}

TEST(DimensionSizeTest, SetDimensionSizeToTheFullSizeKeepsTheValues) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  n = s32[] get-dimension-size(p), dimensions={1}
  ROOT s = s32[2,<=3] set-dimension-size(p, n), dimensions={1}
})",
                             {Ints(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

// ---------------------------------------------------------------------------------------------
// Opcodes the interpreter does not evaluate fail loudly, naming the op, instead of producing
// made-up values.

TEST(UnsupportedOpcodeTest, IsAnUnimplementedErrorNamingTheOpcode) {
  for (Opcode opcode :
       {Opcode::kStochasticConvert, Opcode::kCholesky, Opcode::kTriangularSolve, Opcode::kFft,
        Opcode::kDynamicReshape, Opcode::kInfeed, Opcode::kOutfeed, Opcode::kSend,
        Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone, Opcode::kRngGetAndUpdateState}) {
    const std::string name(ir::OpcodeName(opcode));
    SCOPED_TRACE(name);
    Result<ir::Literal> r = EvalOp(opcode, S(DType::kF32, {2}), {Vals(DType::kF32, {2}, {1, 2})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(r.status().message().find("(" + name + ") in computation entry"), std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace alpa::interp::testing
