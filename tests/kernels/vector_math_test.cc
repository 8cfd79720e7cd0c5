// The builds of the f32 vector math for each instruction set (kernels/vector_math.h): every one
// this CPU runs gives the baseline's bytes for the exact functions and stays within the ulp
// bounds of the C library for the approximated ones, at the edges too; the widest is chosen.
#include "kernels/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "test_util.h"

namespace alpa::kernels::internal {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every float the functions treat specially, then a spread of magnitudes and signs; 1000
// elements, so that every vector width has a remainder.
std::vector<float> Inputs() {
  std::vector<float> x = {0.0f,  -0.0f, kInf,   -kInf,  kNaN,  1e-45f, -1e-45f, 1e-40f,
                          -88.f, 88.f,  -87.4f, -104.f, 1e30f, -1e30f, 0.5f,    -0.5f};
  for (int i = 0; x.size() < 1000; ++i) {
    const float magnitude = std::ldexp(1.0f + static_cast<float>(i % 97) / 97.0f, i % 21 - 10);
    x.push_back(i % 2 == 0 ? magnitude : -magnitude);
  }
  return x;
}

bool SameBytes(const std::vector<float>& a, const std::vector<float>& b) {
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<const VectorMath*> WiderThanTheBaseline() {
  std::vector<const VectorMath*> found;
  for (VectorIsa isa : {VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    if (const VectorMath* math = VectorMathFor(isa)) found.push_back(math);
  }
  return found;
}

TEST(VectorMathTest, EveryBuildThisCpuRunsAgreesWithTheBaseline) {
  const std::vector<const VectorMath*> wider = WiderThanTheBaseline();
  if (wider.empty()) GTEST_SKIP() << "this CPU runs the baseline build only";
  const VectorMath& baseline = *VectorMathFor(VectorIsa::kBaseline);
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.rbegin(), x.rend());
  const int64_t n = static_cast<int64_t>(x.size());
  for (const VectorMath* math : wider) {
    SCOPED_TRACE(std::string(VectorIsaName(math->isa)));
    for (UnaryFn fn :
         {UnaryFn::kNegate, UnaryFn::kAbs, UnaryFn::kSqrt, UnaryFn::kRsqrt, UnaryFn::kSine,
          UnaryFn::kCosine, UnaryFn::kExp, UnaryFn::kLog, UnaryFn::kTanh, UnaryFn::kLogistic}) {
      std::vector<float> want(x.size()), got(x.size());
      baseline.unary(fn, x.data(), want.data(), n);
      math->unary(fn, x.data(), got.data(), n);
      const bool approximated = fn == UnaryFn::kExp || fn == UnaryFn::kLog ||
                                fn == UnaryFn::kTanh || fn == UnaryFn::kLogistic;
      if (!approximated) {
        EXPECT_TRUE(SameBytes(got, want)) << "unary " << static_cast<int>(fn);
        continue;
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << "unary " << static_cast<int>(fn) << " of " << x[i];
        } else {
          EXPECT_LE(kernels::testing::UlpDistance(got[i], want[i]), 4)
              << "unary " << static_cast<int>(fn) << " of " << x[i];
        }
      }
    }
    for (BinaryFn fn : {BinaryFn::kAdd, BinaryFn::kSubtract, BinaryFn::kMultiply, BinaryFn::kDivide,
                        BinaryFn::kMaximum, BinaryFn::kMinimum, BinaryFn::kPower}) {
      std::vector<float> want(x.size()), got(x.size());
      baseline.binary(fn, x.data(), y.data() + 3, want.data(), n - 3);
      math->binary(fn, x.data(), y.data() + 3, got.data(), n - 3);
      EXPECT_TRUE(SameBytes(got, want)) << "binary " << static_cast<int>(fn);
    }
  }
}

// Eigen's own loops would compute the elements before the output's first aligned packet with the
// scalar function (the C library's exp): the bytes would depend on the buffers' addresses.
TEST(VectorMathTest, TheBytesDoNotDependOnWhereTheBuffersLie) {
  const std::vector<float> x = Inputs();
  const int64_t n = 500;
  for (VectorIsa isa : {VectorIsa::kBaseline, VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    const VectorMath* math = VectorMathFor(isa);
    if (math == nullptr) continue;
    for (UnaryFn fn : {UnaryFn::kExp, UnaryFn::kLog, UnaryFn::kTanh, UnaryFn::kLogistic}) {
      std::vector<float> aligned(static_cast<size_t>(n));
      math->unary(fn, x.data() + 16, aligned.data(), n);
      for (int64_t shift = 1; shift < 16; ++shift) {
        std::vector<float> in(x.begin() + 16 - shift, x.end()), out(static_cast<size_t>(n + 16));
        math->unary(fn, in.data() + shift, out.data() + shift, n);
        EXPECT_EQ(std::memcmp(out.data() + shift, aligned.data(), n * sizeof(float)), 0)
            << VectorIsaName(isa) << " unary " << static_cast<int>(fn) << " shifted by " << shift;
      }
    }
  }
}

TEST(VectorMathTest, TheWidestBuildThisCpuRunsIsChosen) {
  const std::vector<const VectorMath*> wider = WiderThanTheBaseline();
  const VectorIsa widest = wider.empty() ? VectorIsa::kBaseline : wider.back()->isa;
  EXPECT_EQ(BestVectorMath().isa, widest);
  EXPECT_EQ(VectorInstructionSet(), VectorIsaName(widest));
}

}  // namespace
}  // namespace alpa::kernels::internal
