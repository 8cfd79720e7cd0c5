#include "ir/dtype.h"

#include <array>

namespace alpa::ir {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int64_t bytes;
};

constexpr std::array kDTypes = {
#define ALPA_DTYPE_INFO(name, text, bytes) DTypeInfo{DType::name, text, bytes},
    ALPA_DTYPE_LIST(ALPA_DTYPE_INFO)
#undef ALPA_DTYPE_INFO
};

const DTypeInfo& Info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
int64_t DTypeByteSize(DType dtype) { return Info(dtype).bytes; }

std::optional<DType> ParseDType(std::string_view text) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == text) return info.dtype;
  }
  return std::nullopt;
}

bool IsFloating(DType dtype) {
  switch (dtype) {
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32:
    case DType::kF64:
      return true;
    default:
      return false;
  }
}

bool IsF32F16OrBF16(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

bool IsComplex(DType dtype) { return dtype == DType::kC64 || dtype == DType::kC128; }

bool IsSignedInteger(DType dtype) {
  return dtype == DType::kS4 || dtype == DType::kS8 || dtype == DType::kS16 ||
         dtype == DType::kS32 || dtype == DType::kS64;
}

bool IsUnsignedInteger(DType dtype) {
  return dtype == DType::kU4 || dtype == DType::kU8 || dtype == DType::kU16 ||
         dtype == DType::kU32 || dtype == DType::kU64;
}

bool IsInteger(DType dtype) { return IsSignedInteger(dtype) || IsUnsignedInteger(dtype); }

bool IsArrayDType(DType dtype) { return dtype != DType::kToken && dtype != DType::kOpaque; }

}  // namespace alpa::ir
