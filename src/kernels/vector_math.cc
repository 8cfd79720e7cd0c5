// The f32 vector math of vector_math.h, compiled once per instruction set: CMakeLists.txt builds
// this file with ALPA_VECTOR_ISA set to baseline, avx2 or avx512 and the matching -m flags.
//
// Every inline function a translation unit uses is emitted as a weak symbol that the linker
// merges with the other units' copies of the same name, keeping one: an AVX2 copy of an Eigen
// template could then serve the baseline's callers and fault on a CPU without AVX2. Eigen is
// therefore renamed here (its namespace becomes Eigen_avx2, ...), and this file defines
// everything else it uses in a namespace of its instruction set, so that no symbol it emits is
// shared with another unit. (`nm -C` on its object lists no weak symbol outside those.)
#if !defined(ALPA_VECTOR_ISA) || !defined(ALPA_VECTOR_ISA_ENUM)
#error "vector_math.cc is built once per instruction set with ALPA_VECTOR_ISA (CMakeLists.txt)"
#endif

#include "kernels/vector_math.h"

#define ALPA_JOIN_INNER(a, b) a##_##b
#define ALPA_JOIN(a, b) ALPA_JOIN_INNER(a, b)
#define Eigen ALPA_JOIN(Eigen, ALPA_VECTOR_ISA)
#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace alpa::kernels::internal::ALPA_VECTOR_ISA {
namespace {

using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using ConstF = Eigen::Map<const ArrayF>;
using MutF = Eigen::Map<ArrayF>;

// Eigen's NaN-propagating max and min (XLA's semantics; std::max would drop a NaN in b).
using MaxOp = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
using MinOp = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;

// Eigen 3.4's exp clamps its argument at -88.38, so exp(-inf) came out 2.9e-39 (a denormal,
// slowly), not 0; its log reads a denormal as the smallest normal float (log(1e-45) = -87.3, not
// -103.3). Below ln(FLT_MIN) exp is denormal or 0, and below FLT_MIN log's argument is denormal:
// there (and for NaN, which `!(v >= ...)` catches) the C library's exact functions run instead.
constexpr float kFloatMin = std::numeric_limits<float>::min();
constexpr float kExpNormalFrom = -87.33654f;  // ln(FLT_MIN), rounded up

// Below ln(2^-150) exp rounds to 0: answered without the C library's slow underflow path.
float ExactExp(float v) { return v < -104.0f ? 0.0f : std::exp(v); }

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int64_t kPacket = Eigen::internal::packet_traits<float>::size;

// out[i] = fn(x[i]) for i < n, the whole packets through Eigen's packet function `fn`, the last
// partial packet through `scalar`, the C library's function (the interpreter's). Eigen's own
// assignment loop would also compute the elements before the output's first aligned packet with
// the scalar function, so its bytes would depend on where the buffers happen to lie; here they
// depend on n only.
template <typename PacketFn, typename ScalarFn>
void Packetwise(const float* x, float* out, int64_t n, const PacketFn& fn, const ScalarFn& scalar) {
  int64_t i = 0;
  for (; i + kPacket <= n; i += kPacket) {
    Eigen::internal::pstoreu(out + i, fn(Eigen::internal::ploadu<Packet>(x + i)));
  }
  for (; i < n; ++i) out[i] = scalar(x[i]);
}

// Packetwise(fn, exact) where exact_here(x) is false, exact(x) where it is true, over n
// elements. A block with such elements is staged first, so that `out` may alias `x`.
template <typename PacketFn, typename ExactHere, typename Exact>
void WithExactTail(const float* x, float* out, int64_t n, const PacketFn& fn,
                   const ExactHere& exact_here, const Exact& exact) {
  constexpr int64_t kBlock = 1024;
  float staged[kBlock];
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t length = n - first < kBlock ? n - first : kBlock;
    bool any = false;
    for (int64_t i = 0; i < length; ++i) any |= exact_here(x[first + i]);
    if (!any) {
      Packetwise(x + first, out + first, length, fn, exact);
      continue;
    }
    for (int64_t i = 0; i < length; ++i) staged[i] = x[first + i];
    Packetwise(staged, out + first, length, fn, exact);
    for (int64_t i = 0; i < length; ++i) {
      if (exact_here(staged[i])) out[first + i] = exact(staged[i]);
    }
  }
}

// exp(max(v, ln(FLT_MIN))): Eigen's exp where it never computes a denormal (slowly). Its
// generic exp, which its SSE and AVX builds' pexp call: Eigen 3.4's AVX-512 pexp is an older
// one, clamped at 88.376 (so logistic(-88.41) came out 4.1e-39, not 3.7e-39) and 2 ulps less
// exact, which made the AVX-512 build disagree with the others (found on an AMD EPYC with
// AVX-512).
Packet ClampedExp(const Packet& v) {
  using namespace Eigen::internal;
  return pexp_float(pmax(v, pset1<Packet>(kExpNormalFrom)));
}

void Unary(UnaryFn fn, const float* x, float* out, int64_t n) {
  using namespace Eigen::internal;
  switch (fn) {
    // Plain loops (a sign-bit flip and clear, vectorised by the compiler): Eigen's AVX negate is
    // 0 - x, which gives +0 for +0 and keeps a NaN's sign, where C++'s -x (the interpreter's)
    // flips it.
    case UnaryFn::kNegate:
      for (int64_t i = 0; i < n; ++i) out[i] = -x[i];
      break;
    case UnaryFn::kAbs:
      for (int64_t i = 0; i < n; ++i) out[i] = std::fabs(x[i]);
      break;
    case UnaryFn::kExp:
      // The C library takes the arguments whose exp is denormal or 0, and NaN.
      WithExactTail(
          x, out, n, ClampedExp, [](float v) { return !(v >= kExpNormalFrom); }, ExactExp);
      break;
    case UnaryFn::kLog:
      WithExactTail(
          x, out, n, [](const Packet& v) { return plog(v); },
          [](float v) { return v > 0 && v < kFloatMin; }, [](float v) { return std::log(v); });
      break;
    case UnaryFn::kTanh:
      Packetwise(
          x, out, n, [](const Packet& v) { return ptanh(v); },
          [](float v) { return std::tanh(v); });
      break;
    case UnaryFn::kLogistic:
      // 1 / (1 + exp(-v)), exp(-v) as the kExp case computes it: Eigen's where -v is at least
      // ln(FLT_MIN), the C library's beyond (v above 87.3, where the result rounds to 1, and NaN).
      WithExactTail(
          x, out, n,
          [](const Packet& v) {
            const Packet one = pset1<Packet>(1.0f);
            return pdiv(one, padd(ClampedExp(psub(pset1<Packet>(0.0f), v)), one));
          },
          [](float v) { return !(-v >= kExpNormalFrom); },
          [](float v) { return 1.0f / (1.0f + ExactExp(-v)); });
      break;
    case UnaryFn::kSqrt:
      for (int64_t i = 0; i < n; ++i) out[i] = std::sqrt(x[i]);
      break;
    case UnaryFn::kRsqrt:
      for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / std::sqrt(x[i]);
      break;
    case UnaryFn::kSine:
      for (int64_t i = 0; i < n; ++i) out[i] = std::sin(x[i]);
      break;
    case UnaryFn::kCosine:
      for (int64_t i = 0; i < n; ++i) out[i] = std::cos(x[i]);
      break;
  }
}

void Binary(BinaryFn fn, const float* a, const float* b, float* out, int64_t n) {
  MutF result(out, n);
  const ConstF lhs(a, n), rhs(b, n);
  switch (fn) {
    case BinaryFn::kAdd:
      result = lhs + rhs;
      break;
    case BinaryFn::kSubtract:
      result = lhs - rhs;
      break;
    case BinaryFn::kMultiply:
      result = lhs * rhs;
      break;
    case BinaryFn::kDivide:
      result = lhs / rhs;
      break;
    case BinaryFn::kMaximum:
      result = lhs.binaryExpr(rhs, MaxOp());
      break;
    case BinaryFn::kMinimum:
      result = lhs.binaryExpr(rhs, MinOp());
      break;
    case BinaryFn::kPower:
      for (int64_t i = 0; i < n; ++i) out[i] = std::pow(a[i], b[i]);
      break;
  }
}

}  // namespace

extern const VectorMath kVectorMath;
const VectorMath kVectorMath = {VectorIsa::ALPA_VECTOR_ISA_ENUM, Unary, Binary};

}  // namespace alpa::kernels::internal::ALPA_VECTOR_ISA
