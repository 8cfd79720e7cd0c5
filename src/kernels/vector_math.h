// Internal to the kernels layer: the f32 vector math of the elementwise kernels (elementwise.h),
// built once per instruction set and chosen at load time for the CPU the program runs on.
//
// Eigen fixes its packet width when it is compiled: at the build's x86-64 baseline that is SSE2,
// 4 floats and no rounding instruction, where its exp took 2.8 ns an element on an AVX2 EPYC
// against 0.75 ns built for AVX2 and FMA (tanh 1.2 against 0.5; a multiply, bound by memory,
// 0.59 against 0.52). vector_math.cc is therefore compiled three times (CMakeLists.txt): for the
// baseline, for AVX2 + FMA, and for AVX-512 (F, DQ, BW, VL), each into its own namespace, and the
// kernels call the widest one the CPU runs.
//
// Bytes: negate, abs, sqrt, rsqrt, add, subtract, multiply, divide, maximum and minimum are
// exact, and sine, cosine and power are the C library's, so each gives the same bytes on every
// CPU (no multiply-add is contracted: -ffp-contract=off). Eigen's exp, log, tanh and logistic
// approximations use fused multiply-adds where the CPU has them, so their last bit may differ
// between CPUs, within the few ulp elementwise.h states; on one CPU they are deterministic.
#ifndef ALPA_KERNELS_VECTOR_MATH_H_
#define ALPA_KERNELS_VECTOR_MATH_H_

#include <cstdint>
#include <string_view>

#include "kernels/elementwise.h"

namespace alpa::kernels::internal {

enum class VectorIsa { kBaseline, kAvx2, kAvx512 };

struct VectorMath {
  VectorIsa isa;
  // out[i] = fn(x[i]) for i < n, on the calling thread; `out` may alias `x`.
  void (*unary)(UnaryFn fn, const float* x, float* out, int64_t n);
  // out[i] = fn(a[i], b[i]) for i < n, on the calling thread; `out` may alias an operand.
  void (*binary)(BinaryFn fn, const float* a, const float* b, float* out, int64_t n);
};

// The vector math built for `isa`, or nullptr where this CPU cannot run it or the build has none
// (a CPU other than x86-64 has the baseline only).
const VectorMath* VectorMathFor(VectorIsa isa);

// The widest vector math this CPU runs, chosen on first use; ALPA_MAX_CPU_ISA (sse2, avx2 or
// avx512) caps it, to compare instruction sets on one machine or reproduce a narrower CPU's bytes
// (VectorInstructionSetCapError checks the value).
const VectorMath& BestVectorMath();

std::string_view VectorIsaName(VectorIsa isa);

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_VECTOR_MATH_H_
