// Elementwise kernels on raw contiguous buffers: the fast path the runtime takes for the f32
// arithmetic, comparisons and selects a training step spends most of its non-matmul time in.
//
// Vectorised with Eigen's packet math (its exp, log and tanh are polynomial or rational
// approximations within a few ulp of the correctly rounded value, as XLA's CPU backend's are) or
// by the compiler (plain loops), for the widest vectors the CPU has: the unary and binary f32
// math is built for SSE2, AVX2 and AVX-512 and chosen at load time (vector_math.h). Split over the
// calling thread's OpenMP team in fixed chunks (parallel_for.h), so the bytes written do not depend
// on the thread count. Semantics follow XLA where C++ does not already: maximum and minimum
// propagate NaN; comparisons are IEEE (NaN unordered, -0 == +0), which is XLA's default comparison
// type for floats (not TOTALORDER). `out` may alias an input; nothing else may overlap.
#ifndef ALPA_KERNELS_ELEMENTWISE_H_
#define ALPA_KERNELS_ELEMENTWISE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"

namespace alpa::kernels {

enum class UnaryFn { kNegate, kAbs, kExp, kLog, kTanh, kSqrt, kRsqrt, kLogistic, kSine, kCosine };
enum class BinaryFn { kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kPower };

// out[i] = fn(x[i]) for i < n. sqrt is IEEE's (correctly rounded) and rsqrt(x) = 1 / sqrt(x)
// rounded twice, as the interpreter computes them; Eigen's fast-math sqrt and rsqrt (one Newton
// step from an estimate, wrong for infinity and denormals) are not used. logistic(x) =
// 1 / (1 + exp(-x)), the interpreter's formula (SwiGLU's silu is x logistic(x)). sine and cosine
// are the C library's, as the interpreter's (RoPE's angles reach thousands of radians, where a
// vectorised polynomial's range reduction loses digits).
void UnaryF32(UnaryFn fn, const float* x, float* out, int64_t n);

// out[i] = fn(a[i], b[i]) for i < n. power is the C library's powf, as the interpreter's.
void BinaryF32(BinaryFn fn, const float* a, const float* b, float* out, int64_t n);

// out[i] = a[i] <direction> b[i] for i < n.
void CompareF32(ir::ComparisonDirection direction, const float* a, const float* b, bool* out,
                int64_t n);
void CompareS32(ir::ComparisonDirection direction, const int32_t* a, const int32_t* b, bool* out,
                int64_t n);

// out[i] = a[i] and / or b[i] for i < n, over predicates.
enum class LogicalFn { kAnd, kOr };
void LogicalPred(LogicalFn fn, const bool* a, const bool* b, bool* out, int64_t n);

// out[i] = min(max(x[i], lo), hi) for i < n (XLA's clamp), each bound an array of n (stride 1)
// or one value (stride 0).
void ClampS32(const int32_t* lo, int64_t lo_stride, const int32_t* x, const int32_t* hi,
              int64_t hi_stride, int32_t* out, int64_t n);

// out[i] = pred[i] ? on_true[i] : on_false[i] for i < n, the elements of `dtype`, any type of 4
// or 2 bytes (the bytes are copied, so a NaN's payload is kept).
void Select(ir::DType dtype, const bool* pred, const void* on_true, const void* on_false, void* out,
            int64_t n);

// out[i] = float(x[i]) for i < n: the exact conversions (s32 to f32 rounds to nearest even).
void ConvertS32ToF32(const int32_t* x, float* out, int64_t n);
void ConvertPredToF32(const bool* x, float* out, int64_t n);

// --- f16 and bf16 (`dtype` kF16 or kBF16), as the interpreter and XLA's CPU backend compute
// them: each block of elements widened to f32, the f32 function above applied, the result
// rounded once to 16 bits (to nearest even). Exact functions therefore give the interpreter's
// bytes; the approximated ones (exp, log, tanh, logistic) are within one 16-bit ulp of it.

void Unary16(UnaryFn fn, ir::DType dtype, const void* x, void* out, int64_t n);
void Binary16(BinaryFn fn, ir::DType dtype, const void* a, const void* b, void* out, int64_t n);
void Compare16(ir::ComparisonDirection direction, ir::DType dtype, const void* a, const void* b,
               bool* out, int64_t n);

// --- any float type: the f32 kernels above for kF32, the 16-bit ones for kF16 and kBF16 (and
// for Compare, CompareS32 for kS32).

void Unary(UnaryFn fn, ir::DType dtype, const void* x, void* out, int64_t n);
void Binary(BinaryFn fn, ir::DType dtype, const void* a, const void* b, void* out, int64_t n);
void Compare(ir::ComparisonDirection direction, ir::DType dtype, const void* a, const void* b,
             bool* out, int64_t n);

// out[i] = x[i] converted from `from` to `to`, each f32, f16 or bf16 (or pred, from only): exact
// widening, rounding to nearest even when narrowing (f16 <-> bf16 through f32, exact first).
void ConvertFloat(ir::DType from, const void* x, ir::DType to, void* out, int64_t n);

// out[i] = (i / stride) % extent for i < n: iota along a dimension of `extent` elements whose
// row-major stride is `stride` (both > 0).
void IotaS32(int32_t* out, int64_t n, int64_t stride, int64_t extent);
void IotaF32(float* out, int64_t n, int64_t stride, int64_t extent);

// The instruction set the f32 unary and binary kernels run on this CPU: sse2, avx2 or avx512 on
// x86-64 (vector_math.h).
std::string_view VectorInstructionSet();

// Empty, or why ALPA_MAX_CPU_ISA cannot be honoured: a value that names no instruction set, or
// one whose extensions this CPU lacks (named, with the choices it has). The front ends (the CLI,
// the Python package) refuse such a value before anything runs.
std::string VectorInstructionSetCapError();

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_ELEMENTWISE_H_
