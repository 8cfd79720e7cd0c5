#include "literal_arrays.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <optional>
#include <vector>

#include "bindings.h"
#include "ir/dtype.h"

namespace nb = nanobind;

namespace alpa::python {
namespace {

// The DLPack element type NumPy holds `dtype` as; none for types NumPy has no array of.
std::optional<nb::dlpack::dtype> NumpyDType(ir::DType dtype) {
  using Code = nb::dlpack::dtype_code;
  auto of = [](Code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
    case ir::DType::kPred:
      return of(Code::Bool, 8);
    case ir::DType::kS8:
      return of(Code::Int, 8);
    case ir::DType::kS16:
      return of(Code::Int, 16);
    case ir::DType::kS32:
      return of(Code::Int, 32);
    case ir::DType::kS64:
      return of(Code::Int, 64);
    case ir::DType::kU8:
      return of(Code::UInt, 8);
    case ir::DType::kU16:
      return of(Code::UInt, 16);
    case ir::DType::kU32:
      return of(Code::UInt, 32);
    case ir::DType::kU64:
      return of(Code::UInt, 64);
    case ir::DType::kF16:
      return of(Code::Float, 16);
    case ir::DType::kBF16:
      return of(Code::UInt, 16);  // the same bits: see the header
    case ir::DType::kF32:
      return of(Code::Float, 32);
    case ir::DType::kF64:
      return of(Code::Float, 64);
    case ir::DType::kC64:
      return of(Code::Complex, 64);
    case ir::DType::kC128:
      return of(Code::Complex, 128);
    default:
      return std::nullopt;
  }
}

std::string DTypeText(nb::dlpack::dtype dtype) {
  static constexpr const char* kCodes[] = {"int",    "uint",    "float", "opaque",
                                           "bfloat", "complex", "bool"};
  const char* code = dtype.code < std::size(kCodes) ? kCodes[dtype.code] : "unknown";
  return fmt::format("{}{}", code, dtype.bits);
}

}  // namespace

ir::Literal LiteralFromArray(const HostArray& array, const ir::Shape& shape,
                             std::string_view what) {
  std::vector<int64_t> dims(array.ndim());
  for (size_t d = 0; d < array.ndim(); ++d) dims[d] = static_cast<int64_t>(array.shape(d));
  const std::optional<nb::dlpack::dtype> want = NumpyDType(shape.dtype());
  if (!want) {
    Raise(InvalidArgument("{}: its parameter is {}, which no NumPy array holds", what,
                          shape.ToString(false)));
  }
  if (dims != shape.dims() || array.dtype() != *want) {
    Raise(InvalidArgument("{}: expected {} ({} elements), got {} array of shape [{}]", what,
                          shape.ToString(false), DTypeText(*want), DTypeText(array.dtype()),
                          fmt::join(dims, ",")));
  }
  ir::Literal literal = ir::Literal::CreateUninitialized(shape);
  std::memcpy(literal.data(), array.data(), static_cast<size_t>(literal.size_bytes()));
  return literal;
}

NumpyArray ArrayFromLiteral(ir::Literal literal) {
  const ir::Shape shape = literal.shape();
  const std::optional<nb::dlpack::dtype> dtype = NumpyDType(shape.dtype());
  if (!shape.IsArray() || !dtype) {
    Raise(Unimplemented("a result of shape {} has no NumPy array", shape.ToString(false)));
  }
  auto* owned = new ir::Literal(std::move(literal));
  nb::capsule owner(owned,
                    [](void* pointer) noexcept { delete static_cast<ir::Literal*>(pointer); });
  std::vector<size_t> dims(shape.dims().begin(), shape.dims().end());
  return NumpyArray(owned->data(), dims.size(), dims.data(), owner, /*strides=*/nullptr, *dtype,
                    nb::device::cpu::value);
}

}  // namespace alpa::python
