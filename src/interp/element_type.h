// Internal to the interpreter: mapping from ir::DType to the C++ type its elements are stored as,
// and the dispatch that lets a handler be written once as a template over that type.
//
// Hot loops (elementwise, reductions) are instantiated per element type so that the loop body is
// a direct call, never a per-element switch or virtual call.
#ifndef ALPA_INTERP_ELEMENT_TYPE_H_
#define ALPA_INTERP_ELEMENT_TYPE_H_

#include <Eigen/Core>

#include <complex>
#include <cstdint>
#include <type_traits>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::interp::internal {

using Half = Eigen::half;
using BFloat16 = Eigen::bfloat16;

template <typename T>
struct TypeTag {
  using type = T;
};

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
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                                 std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Calls fn(TypeTag<T>{}) with the storage type of `dtype`. s4/u4, f8 types, token and opaque have
// no arithmetic here: `fn` is not called and an Unimplemented error is returned (the caller adds
// the instruction name). `Fn` must return Status or Result<...>.
template <typename Fn>
auto VisitDType(ir::DType dtype, Fn&& fn) -> decltype(fn(TypeTag<float>{})) {
  using ir::DType;
  switch (dtype) {
    case DType::kPred: return fn(TypeTag<bool>{});
    case DType::kS8: return fn(TypeTag<int8_t>{});
    case DType::kS16: return fn(TypeTag<int16_t>{});
    case DType::kS32: return fn(TypeTag<int32_t>{});
    case DType::kS64: return fn(TypeTag<int64_t>{});
    case DType::kU8: return fn(TypeTag<uint8_t>{});
    case DType::kU16: return fn(TypeTag<uint16_t>{});
    case DType::kU32: return fn(TypeTag<uint32_t>{});
    case DType::kU64: return fn(TypeTag<uint64_t>{});
    case DType::kF16: return fn(TypeTag<Half>{});
    case DType::kBF16: return fn(TypeTag<BFloat16>{});
    case DType::kF32: return fn(TypeTag<float>{});
    case DType::kF64: return fn(TypeTag<double>{});
    case DType::kC64: return fn(TypeTag<std::complex<float>>{});
    case DType::kC128: return fn(TypeTag<std::complex<double>>{});
    default:
      return Unimplemented("element type {} has no arithmetic in the interpreter",
                           ir::DTypeName(dtype));
  }
}

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_ELEMENT_TYPE_H_
