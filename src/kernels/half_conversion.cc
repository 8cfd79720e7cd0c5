#include "kernels/half_conversion.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "support/cpu_features.h"

namespace alpa::kernels::internal {
namespace {

void WidenWithEigen(const Eigen::half* in, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
}

void NarrowWithEigen(const float* in, Eigen::half* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<Eigen::half>(in[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void WidenWithF16c(const Eigen::half* in, float* out,
                                                       int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  WidenWithEigen(in + i, out + i, count - i);
}

__attribute__((target("avx,f16c"))) void NarrowWithF16c(const float* in, Eigen::half* out,
                                                        int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), halves);
  }
  NarrowWithEigen(in + i, out + i, count - i);
}
#endif

}  // namespace

void WidenF16ToF32(const Eigen::half* in, float* out, int64_t count) {
#if defined(__x86_64__)
  if (CpuHasF16c()) return WidenWithF16c(in, out, count);
#endif
  WidenWithEigen(in, out, count);
}

void NarrowF32ToF16(const float* in, Eigen::half* out, int64_t count) {
#if defined(__x86_64__)
  if (CpuHasF16c()) return NarrowWithF16c(in, out, count);
#endif
  NarrowWithEigen(in, out, count);
}

}  // namespace alpa::kernels::internal
