// Elementwise unary ops. Floats follow the C library (f16/bf16 through f32); integer abs and
// negate wrap around (abs(INT_MIN) = INT_MIN), as in XLA.
#include <bit>
#include <cmath>
#include <complex>
#include <type_traits>

#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"
#include "interp/scalar_ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;
using ir::Opcode;

template <typename In, typename Out, typename Fn>
Literal Map(const Literal& input, const ir::Shape& shape, Fn fn) {
  Literal output = Literal::CreateZeros(shape);
  const In* in = input.typed_data<In>();
  Out* out = output.typed_data<Out>();
  const int64_t n = input.element_count();
  for (int64_t i = 0; i < n; ++i) out[i] = fn(in[i]);
  return output;
}

Status Unsupported(Opcode opcode, ir::DType dtype) {
  return Unimplemented("{} is not defined on element type {}", ir::OpcodeName(opcode),
                       ir::DTypeName(dtype));
}

// Ops whose result has the operand's element type, on real floating types.
template <typename T>
Result<Literal> FloatUnary(Opcode opcode, const Literal& in, const ir::Shape& shape) {
  using C = ComputeType<T>;
  auto map = [&](auto fn) {
    return Map<T, T>(in, shape, [fn](T x) { return static_cast<T>(fn(static_cast<C>(x))); });
  };
  switch (opcode) {
    case Opcode::kAbs: return map([](C x) { return std::fabs(x); });
    case Opcode::kNegate: return map([](C x) { return -x; });
    case Opcode::kExp: return map([](C x) { return std::exp(x); });
    case Opcode::kExpm1: return map([](C x) { return std::expm1(x); });
    case Opcode::kLog: return map([](C x) { return std::log(x); });
    case Opcode::kLog1p: return map([](C x) { return std::log1p(x); });
    // logistic(x) = 1 / (1 + e^-x)
    case Opcode::kLogistic: return map([](C x) { return C{1} / (C{1} + std::exp(-x)); });
    case Opcode::kSqrt: return map([](C x) { return std::sqrt(x); });
    case Opcode::kRsqrt: return map([](C x) { return C{1} / std::sqrt(x); });
    case Opcode::kCbrt: return map([](C x) { return std::cbrt(x); });
    case Opcode::kSin: return map([](C x) { return std::sin(x); });
    case Opcode::kCos: return map([](C x) { return std::cos(x); });
    case Opcode::kTan: return map([](C x) { return std::tan(x); });
    case Opcode::kTanh: return map([](C x) { return std::tanh(x); });
    case Opcode::kErf: return map([](C x) { return std::erf(x); });
    case Opcode::kFloor: return map([](C x) { return std::floor(x); });
    case Opcode::kCeil: return map([](C x) { return std::ceil(x); });
    // Ties away from zero.
    case Opcode::kRoundNearestAfz: return map([](C x) { return std::round(x); });
    // Ties to even (the default floating-point rounding mode).
    case Opcode::kRoundNearestEven: return map([](C x) { return std::nearbyint(x); });
    // sign: -1, +1, or x itself for +-0 and NaN.
    case Opcode::kSign:
      return map([](C x) { return x > 0 ? C{1} : x < 0 ? C{-1} : x; });
    case Opcode::kReal: return map([](C x) { return x; });
    case Opcode::kImag: return map([](C) { return C{0}; });
    case Opcode::kIsFinite:
      return Map<T, bool>(in, shape, [](T x) { return std::isfinite(static_cast<C>(x)); });
    default: return Unsupported(opcode, in.shape().dtype());
  }
}

template <typename T>
Result<Literal> ComplexUnary(Opcode opcode, const Literal& in, const ir::Shape& shape) {
  using R = typename T::value_type;
  auto map = [&](auto fn) { return Map<T, T>(in, shape, fn); };
  switch (opcode) {
    case Opcode::kAbs: return Map<T, R>(in, shape, [](T z) { return std::abs(z); });
    case Opcode::kReal: return Map<T, R>(in, shape, [](T z) { return z.real(); });
    case Opcode::kImag: return Map<T, R>(in, shape, [](T z) { return z.imag(); });
    case Opcode::kNegate: return map([](T z) { return -z; });
    case Opcode::kExp: return map([](T z) { return std::exp(z); });
    case Opcode::kExpm1: return map([](T z) { return std::exp(z) - T(1); });
    case Opcode::kLog: return map([](T z) { return std::log(z); });
    case Opcode::kLog1p: return map([](T z) { return std::log(T(1) + z); });
    case Opcode::kLogistic: return map([](T z) { return T(1) / (T(1) + std::exp(-z)); });
    case Opcode::kSqrt: return map([](T z) { return std::sqrt(z); });
    case Opcode::kRsqrt: return map([](T z) { return T(1) / std::sqrt(z); });
    case Opcode::kSin: return map([](T z) { return std::sin(z); });
    case Opcode::kCos: return map([](T z) { return std::cos(z); });
    case Opcode::kTan: return map([](T z) { return std::tan(z); });
    case Opcode::kTanh: return map([](T z) { return std::tanh(z); });
    // sign(z) = z / |z|, 0 for 0.
    case Opcode::kSign:
      return map([](T z) { return z == T(0) ? T(0) : z / std::abs(z); });
    default: return Unsupported(opcode, in.shape().dtype());
  }
}

template <typename T>
Result<Literal> IntUnary(Opcode opcode, const Literal& in, const ir::Shape& shape) {
  using U = std::make_unsigned_t<T>;
  auto map = [&](auto fn) { return Map<T, T>(in, shape, fn); };
  switch (opcode) {
    case Opcode::kAbs:
      if constexpr (std::is_signed_v<T>) {
        return map([](T x) { return x < 0 ? Wrap<T>(0 - static_cast<uint64_t>(x)) : x; });
      } else {
        return map([](T x) { return x; });
      }
    case Opcode::kNegate: return map([](T x) { return Wrap<T>(0 - static_cast<uint64_t>(x)); });
    case Opcode::kSign:
      return map([](T x) { return static_cast<T>(x > 0 ? 1 : x < 0 ? -1 : 0); });
    case Opcode::kNot: return map([](T x) { return static_cast<T>(~x); });
    case Opcode::kPopulationCount:
      return map([](T x) { return static_cast<T>(std::popcount(static_cast<U>(x))); });
    case Opcode::kClz:
      return map([](T x) { return static_cast<T>(std::countl_zero(static_cast<U>(x))); });
    case Opcode::kReal: return map([](T x) { return x; });
    case Opcode::kImag: return map([](T) { return T{0}; });
    default: return Unsupported(opcode, in.shape().dtype());
  }
}

Result<Literal> PredUnary(Opcode opcode, const Literal& in, const ir::Shape& shape) {
  if (opcode == Opcode::kNot) return Map<bool, bool>(in, shape, [](bool x) { return !x; });
  return Unsupported(opcode, in.shape().dtype());
}

// The element type each op produces from operand type `in`.
ir::DType ResultDType(Opcode opcode, ir::DType in) {
  if (opcode == Opcode::kIsFinite) return ir::DType::kPred;
  if (ir::IsComplex(in) &&
      (opcode == Opcode::kAbs || opcode == Opcode::kReal || opcode == Opcode::kImag)) {
    return in == ir::DType::kC64 ? ir::DType::kF32 : ir::DType::kF64;
  }
  return in;
}

}  // namespace

Result<Literal> EvaluateUnary(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const Opcode opcode = instruction.opcode();
  const ir::Shape& shape = instruction.shape();
  const ir::DType expected = ResultDType(opcode, in.shape().dtype());
  if (!shape.IsArray() || shape.dtype() != expected || shape.dims() != in.shape().dims()) {
    return InvalidArgument("result shape {} does not match operand {} (expected element type {})",
                           shape.ToString(false), in.shape().ToString(false),
                           ir::DTypeName(expected));
  }
  return VisitDType(in.shape().dtype(), [&](auto tag) -> Result<Literal> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return PredUnary(opcode, in, shape);
    } else if constexpr (kIsInt<T>) {
      return IntUnary<T>(opcode, in, shape);
    } else if constexpr (kIsComplex<T>) {
      return ComplexUnary<T>(opcode, in, shape);
    } else {
      return FloatUnary<T>(opcode, in, shape);
    }
  });
}

}  // namespace alpa::interp::internal
