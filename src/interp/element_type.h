// Internal to the interpreter: the type its arithmetic computes in, type traits, and the dtype
// dispatch of its handlers (ir/element_type.h with the interpreter's error).
#ifndef ALPA_INTERP_ELEMENT_TYPE_H_
#define ALPA_INTERP_ELEMENT_TYPE_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "ir/dtype.h"
#include "ir/element_type.h"
#include "support/status.h"

namespace alpa::interp::internal {

using Half = Eigen::half;
using BFloat16 = Eigen::bfloat16;

using ir::TypeTag;

// f16 and bf16 are computed in f32 and rounded on store, as XLA's CPU backend does.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <typename T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Calls fn(TypeTag<T>{}) with the storage type of `dtype`. s4/u4, f8 types, token and opaque have
// no arithmetic here: `fn` is not called and an Unimplemented error is returned (the caller adds
// the instruction name). `Fn` must return Status or Result<...>.
template <typename Fn>
auto VisitDType(ir::DType dtype, Fn&& fn) -> decltype(fn(TypeTag<float>{})) {
  return ir::VisitElementType(dtype, std::forward<Fn>(fn), [dtype] {
    return Unimplemented("element type {} has no arithmetic in the interpreter",
                         ir::DTypeName(dtype));
  });
}

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_ELEMENT_TYPE_H_
