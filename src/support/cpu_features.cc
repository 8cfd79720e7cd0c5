#include "support/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace alpa {
namespace {

struct CpuFeatures {
  bool avx2 = false;
  bool f16c = false;
};

CpuFeatures DetectCpuFeatures() {
  CpuFeatures features;
#if defined(__x86_64__)
  // CPUID leaf 1 names AVX, OSXSAVE and F16C in ECX; leaf 7 names AVX2 in EBX. The OS saves the
  // YMM registers when XCR0 bits 1 and 2 (SSE and AVX state) are both set.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return features;
  const unsigned avx_usable = bit_AVX | bit_OSXSAVE;
  if ((ecx & avx_usable) != avx_usable) return features;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return features;
  features.f16c = (ecx & bit_F16C) != 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0) {
    features.avx2 = (ebx & bit_AVX2) != 0;
  }
#endif
  return features;
}

const CpuFeatures& Features() {
  static const CpuFeatures features = DetectCpuFeatures();
  return features;
}

}  // namespace

bool CpuHasAvx2() { return Features().avx2; }
bool CpuHasF16c() { return Features().f16c; }

}  // namespace alpa
