// Chooses among the builds of vector_math.cc (vector_math.h) for the CPU the program runs on.
#include <cstdio>
#include <cstdlib>
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

// The widest instruction set ALPA_MAX_CPU_ISA allows (as oneDNN's ONEDNN_MAX_CPU_ISA caps its
// own): all when it is unset. A value it does not name ends the program with a message, before
// any kernel ran.
VectorIsa MaxIsaAllowed() {
  const char* value = std::getenv("ALPA_MAX_CPU_ISA");
  if (value == nullptr || *value == '\0') return VectorIsa::kAvx512;
  for (VectorIsa isa : {VectorIsa::kBaseline, VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    if (VectorIsaName(isa) == value) return isa;
  }
  std::fprintf(stderr, "error: ALPA_MAX_CPU_ISA=%s: expected %s, avx2 or avx512 (or unset)\n",
               value, std::string(VectorIsaName(VectorIsa::kBaseline)).c_str());
  std::exit(2);
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
