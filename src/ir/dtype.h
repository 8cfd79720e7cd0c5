// Element types, spelled as in XLA's HLO text (`f32`, `bf16`, `pred`, ...).
#ifndef ALPA_IR_DTYPE_H_
#define ALPA_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace alpa::ir {

// X(enum, text, byte size). Byte size is the storage size of one element in a Literal; s4/u4 are
// stored one per byte. token and opaque have no elements.
#define ALPA_DTYPE_LIST(X)           \
  X(kPred, "pred", 1)                \
  X(kS4, "s4", 1)                    \
  X(kS8, "s8", 1)                    \
  X(kS16, "s16", 2)                  \
  X(kS32, "s32", 4)                  \
  X(kS64, "s64", 8)                  \
  X(kU4, "u4", 1)                    \
  X(kU8, "u8", 1)                    \
  X(kU16, "u16", 2)                  \
  X(kU32, "u32", 4)                  \
  X(kU64, "u64", 8)                  \
  X(kF8E4M3FN, "f8e4m3fn", 1)        \
  X(kF8E5M2, "f8e5m2", 1)            \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 1)    \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 1)    \
  X(kF16, "f16", 2)                  \
  X(kBF16, "bf16", 2)                \
  X(kF32, "f32", 4)                  \
  X(kF64, "f64", 8)                  \
  X(kC64, "c64", 8)                  \
  X(kC128, "c128", 16)               \
  X(kToken, "token", 0)              \
  X(kOpaque, "opaque", 0)

enum class DType : uint8_t {
#define ALPA_DTYPE_ENUM(name, text, bytes) name,
  ALPA_DTYPE_LIST(ALPA_DTYPE_ENUM)
#undef ALPA_DTYPE_ENUM
};

std::string_view DTypeName(DType dtype);
std::optional<DType> ParseDType(std::string_view text);
int64_t DTypeByteSize(DType dtype);

bool IsFloating(DType dtype);  // f8*, f16, bf16, f32, f64
// f32, f16 or bf16: the float types the CPU runtime's fast kernels and loops compute, in f32
// (a 16-bit value widened exactly, each result rounded once).
bool IsF32F16OrBF16(DType dtype);
bool IsComplex(DType dtype);   // c64, c128
bool IsInteger(DType dtype);   // s*, u* (not pred)
bool IsSignedInteger(DType dtype);
bool IsUnsignedInteger(DType dtype);
// Types whose arrays hold data: everything but token and opaque.
bool IsArrayDType(DType dtype);

}  // namespace alpa::ir

#endif  // ALPA_IR_DTYPE_H_
