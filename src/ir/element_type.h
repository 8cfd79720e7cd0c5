// The C++ type each dtype's elements are stored as in a Literal, and a dispatch over it, so that a
// kernel or an interpreter handler is written once as a template over the element type.
//
// Hot loops are instantiated per element type: the loop body is a direct call, never a
// per-element switch or virtual call.
#ifndef ALPA_IR_ELEMENT_TYPE_H_
#define ALPA_IR_ELEMENT_TYPE_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>

#include "ir/dtype.h"

namespace alpa::ir {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with the storage type of `dtype` (pred as bool, f16 and bf16 as Eigen's
// 16-bit types) and returns what it returns. s4/u4, the f8 types, token and opaque have no
// storage type here: fn is not called and unsupported() is returned instead.
template <typename Fn, typename Unsupported>
auto VisitElementType(DType dtype, Fn&& fn, Unsupported&& unsupported)
    -> decltype(fn(TypeTag<float>{})) {
  switch (dtype) {
    case DType::kPred:
      return fn(TypeTag<bool>{});
    case DType::kS8:
      return fn(TypeTag<int8_t>{});
    case DType::kS16:
      return fn(TypeTag<int16_t>{});
    case DType::kS32:
      return fn(TypeTag<int32_t>{});
    case DType::kS64:
      return fn(TypeTag<int64_t>{});
    case DType::kU8:
      return fn(TypeTag<uint8_t>{});
    case DType::kU16:
      return fn(TypeTag<uint16_t>{});
    case DType::kU32:
      return fn(TypeTag<uint32_t>{});
    case DType::kU64:
      return fn(TypeTag<uint64_t>{});
    case DType::kF16:
      return fn(TypeTag<Eigen::half>{});
    case DType::kBF16:
      return fn(TypeTag<Eigen::bfloat16>{});
    case DType::kF32:
      return fn(TypeTag<float>{});
    case DType::kF64:
      return fn(TypeTag<double>{});
    case DType::kC64:
      return fn(TypeTag<std::complex<float>>{});
    case DType::kC128:
      return fn(TypeTag<std::complex<double>>{});
    default:
      return unsupported();
  }
}

}  // namespace alpa::ir

#endif  // ALPA_IR_ELEMENT_TYPE_H_
