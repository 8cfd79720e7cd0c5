// Internal to the kernels layer: f16/bf16 <-> f32 over whole buffers, for the 16-bit kernels that
// widen to f32 (element_type.h, elementwise_16bit.cc). Eigen converts one value at a time in
// software (about 1 ns a value here) unless the whole build targets F16C; the f16 functions use
// the CPU's conversion instructions, 8 values per instruction, where it has them, chosen at run
// time so that the build stays portable. The bf16 ones are branch-free bit arithmetic that the
// compiler vectorises. All round to nearest even as Eigen does: the same value for every input (a
// NaN stays a NaN, its payload may differ for f16; bf16 gives Eigen's quiet NaN of the same sign).
#ifndef ALPA_KERNELS_HALF_CONVERSION_H_
#define ALPA_KERNELS_HALF_CONVERSION_H_

#include <Eigen/Core>
#include <cstdint>

#include "ir/dtype.h"

namespace alpa::kernels::internal {

void WidenF16ToF32(const Eigen::half* in, float* out, int64_t count);
void NarrowF32ToF16(const float* in, Eigen::half* out, int64_t count);
void WidenBF16ToF32(const Eigen::bfloat16* in, float* out, int64_t count);
void NarrowF32ToBF16(const float* in, Eigen::bfloat16* out, int64_t count);

// The same for a buffer of `dtype` f16 or bf16.
void Widen16ToF32(ir::DType dtype, const void* in, float* out, int64_t count);
void NarrowF32To16(const float* in, ir::DType dtype, void* out, int64_t count);

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_HALF_CONVERSION_H_
