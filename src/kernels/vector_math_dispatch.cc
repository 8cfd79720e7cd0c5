// Chooses among the builds of vector_math.cc (vector_math.h) for the CPU the program runs on.
#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/vector_math.h"

namespace alpa::kernels::internal {

namespace baseline {
extern const VectorMath kVectorMath;
}
#ifdef ALPA_X86_VECTOR_ISAS
namespace avx2 {
extern const VectorMath kVectorMath;
}
namespace avx512 {
extern const VectorMath kVectorMath;
}
#endif

const VectorMath* VectorMathFor(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kBaseline:
      return &baseline::kVectorMath;
#ifdef ALPA_X86_VECTOR_ISAS
    // __builtin_cpu_supports also asks whether the OS saves the wide registers (XCR0).
    case VectorIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? &avx2::kVectorMath
                                                                             : nullptr;
    case VectorIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                     __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
                 ? &avx512::kVectorMath
                 : nullptr;
#else
    case VectorIsa::kAvx2:
    case VectorIsa::kAvx512:
      return nullptr;
#endif
  }
  return nullptr;
}

namespace {

constexpr VectorIsa kAllIsas[] = {VectorIsa::kBaseline, VectorIsa::kAvx2, VectorIsa::kAvx512};

const char* IsaCap() {
  const char* value = std::getenv("ALPA_MAX_CPU_ISA");
  return value == nullptr || *value == '\0' ? nullptr : value;
}

std::optional<VectorIsa> ParseIsa(std::string_view name) {
  for (VectorIsa isa : kAllIsas) {
    if (VectorIsaName(isa) == name) return isa;
  }
  return std::nullopt;
}

// The widest instruction set ALPA_MAX_CPU_ISA allows (as oneDNN's ONEDNN_MAX_CPU_ISA caps its
// own): all when it is unset. The front ends refuse a value it does not name
// (VectorInstructionSetCapError) before any kernel runs; a program that skips that check gets
// the baseline, which every CPU runs.
VectorIsa MaxIsaAllowed() {
  const char* value = IsaCap();
  if (value == nullptr) return VectorIsa::kAvx512;
  return ParseIsa(value).value_or(VectorIsa::kBaseline);
}

// The extensions an instruction set needs, as a user reads them.
std::string_view IsaExtensions(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kBaseline:
      return "the build's baseline";
    case VectorIsa::kAvx2:
      return "AVX2 and FMA";
    case VectorIsa::kAvx512:
      return "AVX-512 F, DQ, BW and VL";
  }
  return "?";
}

}  // namespace

const VectorMath& BestVectorMath() {
  static const VectorMath& best = []() -> const VectorMath& {
    const VectorIsa cap = MaxIsaAllowed();
    for (VectorIsa isa : {VectorIsa::kAvx512, VectorIsa::kAvx2}) {
      const VectorMath* math = VectorMathFor(isa);
      if (math != nullptr && isa <= cap) return *math;
    }
    return *VectorMathFor(VectorIsa::kBaseline);
  }();
  return best;
}

std::string_view VectorIsaName(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kBaseline:
#ifdef ALPA_X86_VECTOR_ISAS
      return "sse2";
#else
      return "baseline";
#endif
    case VectorIsa::kAvx2:
      return "avx2";
    case VectorIsa::kAvx512:
      return "avx512";
  }
  return "?";
}

}  // namespace alpa::kernels::internal

namespace alpa::kernels {

std::string VectorInstructionSetCapError() {
  using internal::VectorIsa;
  const char* value = internal::IsaCap();
  if (value == nullptr) return "";
  std::string choices;
  for (VectorIsa isa : internal::kAllIsas) {
    if (internal::VectorMathFor(isa) == nullptr) continue;
    choices += (choices.empty() ? "" : ", ") + std::string(internal::VectorIsaName(isa));
  }
  const std::optional<VectorIsa> isa = internal::ParseIsa(value);
  if (!isa) {
    return fmt::format(
        "ALPA_MAX_CPU_ISA={}: not an instruction set; set it to one this CPU runs ({}) or unset it",
        value, choices);
  }
  if (internal::VectorMathFor(*isa) == nullptr) {
    return fmt::format(
        "ALPA_MAX_CPU_ISA={}: this CPU lacks {}, which {} needs; set it to one this CPU runs ({}) "
        "or unset it",
        value, internal::IsaExtensions(*isa), value, choices);
  }
  return "";
}

}  // namespace alpa::kernels
