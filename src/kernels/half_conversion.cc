#include "kernels/half_conversion.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <bit>

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

// Cloned for AVX2 and the baseline, the clone chosen when the program loads (GCC's function
// multiversioning); this file is built with -O3 so that both loops are vectorised.
__attribute__((target_clones("avx2", "default"))) void WidenBF16ToF32(const Eigen::bfloat16* in,
                                                                      float* out, int64_t count) {
  const auto* bits = reinterpret_cast<const uint16_t*>(in);
  for (int64_t i = 0; i < count; ++i) out[i] = std::bit_cast<float>(uint32_t{bits[i]} << 16);
}

__attribute__((target_clones("avx2", "default"))) void NarrowF32ToBF16(const float* in,
                                                                       Eigen::bfloat16* out,
                                                                       int64_t count) {
  // Eigen's float_to_bfloat16_rtne: add 0x7fff plus the lowest kept bit, keep the high half; a
  // NaN becomes the quiet NaN 0x7fc0 with its sign. Selected, not branched, so it vectorises.
  auto* bits = reinterpret_cast<uint16_t*>(out);
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t x = std::bit_cast<uint32_t>(in[i]);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
    const bool is_nan = (x & 0x7fffffffu) > 0x7f800000u;
    bits[i] = static_cast<uint16_t>(is_nan ? nan : rounded);
  }
}

void Widen16ToF32(ir::DType dtype, const void* in, float* out, int64_t count) {
  if (dtype == ir::DType::kF16) {
    WidenF16ToF32(static_cast<const Eigen::half*>(in), out, count);
  } else {
    WidenBF16ToF32(static_cast<const Eigen::bfloat16*>(in), out, count);
  }
}

void NarrowF32To16(const float* in, ir::DType dtype, void* out, int64_t count) {
  if (dtype == ir::DType::kF16) {
    NarrowF32ToF16(in, static_cast<Eigen::half*>(out), count);
  } else {
    NarrowF32ToBF16(in, static_cast<Eigen::bfloat16*>(out), count);
  }
}

}  // namespace alpa::kernels::internal
