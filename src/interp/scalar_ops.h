// Internal to the interpreter: the scalar semantics of XLA's elementwise binary ops, one functor
// per opcode, templated over the element type. Shared by the elementwise handler and by the fast
// paths of reduce / reduce-window / scatter, whose reducers are usually one of these ops.
//
// Semantics follow XLA (operation_semantics and the CPU backend):
//  - f16/bf16 are computed in f32 and rounded once per op.
//  - Integer add/subtract/multiply wrap around (two's complement), computed in u64 to avoid UB.
//  - x / 0 = -1 (all bits set; UINT_MAX for unsigned), INT_MIN / -1 = INT_MIN;
//    x % 0 = x, INT_MIN % -1 = 0.
//  - maximum/minimum propagate NaN.
//  - Shift amounts are read as unsigned: shift-left and shift-right-logical by >= the bit width
//    give 0, shift-right-arithmetic by >= the bit width gives the sign fill (0 or -1).
//  - Integer power: exponentiation by squaring with wrap-around; a negative exponent gives 1 for
//    base 1 and 0 otherwise (XLA's elemental IR emitter).
//  - pred arithmetic is integer arithmetic on 0/1 converted back with `!= 0` (add is or,
//    multiply is and).
#ifndef ALPA_INTERP_SCALAR_OPS_H_
#define ALPA_INTERP_SCALAR_OPS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "interp/element_type.h"

namespace alpa::interp::internal {

// Two's-complement wrap-around of a u64 result into T.
template <typename T>
T Wrap(uint64_t value) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(value));
}

template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

template <typename T>
T IntPower(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) return base == 1 ? 1 : 0;
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(static_cast<int64_t>(base));
  uint64_t e = static_cast<uint64_t>(exponent);
  while (e != 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return Wrap<T>(result);
}

// Each functor: `kSupports<T>` says whether XLA defines the op on T; Apply computes it.
#define ALPA_INTERP_ARITH_OP(Name, int_expr, float_expr)                                       \
  struct Name {                                                                                \
    template <typename T>                                                                      \
    static constexpr bool kSupports = true;                                                    \
    template <typename T>                                                                      \
    static T Apply(T a, T b) {                                                                 \
      if constexpr (std::is_same_v<T, bool>) {                                                 \
        return Apply<int32_t>(a, b) != 0;                                                      \
      } else if constexpr (kIsInt<T>) {                                                        \
        return int_expr;                                                                       \
      } else {                                                                                 \
        using C = ComputeType<T>;                                                              \
        C x = static_cast<C>(a), y = static_cast<C>(b);                                        \
        return static_cast<T>(float_expr);                                                     \
      }                                                                                        \
    }                                                                                          \
  };

ALPA_INTERP_ARITH_OP(AddOp, Wrap<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), x + y)
ALPA_INTERP_ARITH_OP(SubtractOp, Wrap<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)),
                     x - y)
ALPA_INTERP_ARITH_OP(MultiplyOp, Wrap<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)),
                     x* y)
ALPA_INTERP_ARITH_OP(DivideOp, IntDivide(a, b), x / y)
#undef ALPA_INTERP_ARITH_OP

struct RemainderOp {
  template <typename T>
  static constexpr bool kSupports = !kIsComplex<T>;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return IntRemainder<int32_t>(a, b) != 0;
    } else if constexpr (kIsInt<T>) {
      return IntRemainder(a, b);
    } else {
      using C = ComputeType<T>;
      return static_cast<T>(std::fmod(static_cast<C>(a), static_cast<C>(b)));
    }
  }
};

struct MaximumOp {
  template <typename T>
  static constexpr bool kSupports = !kIsComplex<T>;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      using C = ComputeType<T>;
      if (std::isnan(static_cast<C>(a))) return a;
      if (std::isnan(static_cast<C>(b))) return b;
      return static_cast<C>(a) >= static_cast<C>(b) ? a : b;
    } else {
      return a >= b ? a : b;
    }
  }
};

struct MinimumOp {
  template <typename T>
  static constexpr bool kSupports = !kIsComplex<T>;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      using C = ComputeType<T>;
      if (std::isnan(static_cast<C>(a))) return a;
      if (std::isnan(static_cast<C>(b))) return b;
      return static_cast<C>(a) <= static_cast<C>(b) ? a : b;
    } else {
      return a <= b ? a : b;
    }
  }
};

struct PowerOp {
  template <typename T>
  static constexpr bool kSupports = !std::is_same_v<T, bool>;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (kIsInt<T>) {
      return IntPower(a, b);
    } else {
      using C = ComputeType<T>;
      return static_cast<T>(std::pow(static_cast<C>(a), static_cast<C>(b)));
    }
  }
};

struct Atan2Op {
  template <typename T>
  static constexpr bool kSupports = kIsFloat<T>;
  template <typename T>
  static T Apply(T a, T b) {
    using C = ComputeType<T>;
    return static_cast<T>(std::atan2(static_cast<C>(a), static_cast<C>(b)));
  }
};

#define ALPA_INTERP_BITWISE_OP(Name, expr)                           \
  struct Name {                                                      \
    template <typename T>                                            \
    static constexpr bool kSupports = std::is_integral_v<T>;         \
    template <typename T>                                            \
    static T Apply(T a, T b) {                                       \
      if constexpr (std::is_same_v<T, bool>) {                       \
        return static_cast<bool>(static_cast<int>(a) expr static_cast<int>(b)); \
      } else {                                                       \
        return static_cast<T>(a expr b);                             \
      }                                                              \
    }                                                                \
  };
ALPA_INTERP_BITWISE_OP(AndOp, &)
ALPA_INTERP_BITWISE_OP(OrOp, |)
ALPA_INTERP_BITWISE_OP(XorOp, ^)
#undef ALPA_INTERP_BITWISE_OP

struct ShiftLeftOp {
  template <typename T>
  static constexpr bool kSupports = kIsInt<T>;
  template <typename T>
  static T Apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
    return Wrap<T>(static_cast<uint64_t>(static_cast<U>(a)) << static_cast<U>(b));
  }
};

struct ShiftRightLogicalOp {
  template <typename T>
  static constexpr bool kSupports = kIsInt<T>;
  template <typename T>
  static T Apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) >> static_cast<U>(b)));
  }
};

struct ShiftRightArithmeticOp {
  template <typename T>
  static constexpr bool kSupports = kIsInt<T>;
  template <typename T>
  static T Apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    using S = std::make_signed_t<T>;
    S value = static_cast<S>(a);
    // Arithmetic right shift of a signed value is defined (sign-propagating) since C++20.
    if (static_cast<U>(b) >= sizeof(T) * 8) return static_cast<T>(value < 0 ? S{-1} : S{0});
    return static_cast<T>(static_cast<S>(value >> static_cast<U>(b)));
  }
};

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_SCALAR_OPS_H_
