// Internal to the kernels layer: f16 <-> f32 over whole buffers, for the 16-bit kernels that
// widen to f32 (element_type.h). Eigen converts one value at a time in software (about 1 ns a
// value here) unless the whole build targets F16C; these use the CPU's conversion instructions,
// 8 values per instruction, where it has them, chosen at run time so that the build stays
// portable. Both round to nearest even as Eigen does: the same value for every input (a NaN stays
// a NaN, its payload may differ).
#ifndef ALPA_KERNELS_HALF_CONVERSION_H_
#define ALPA_KERNELS_HALF_CONVERSION_H_

#include <Eigen/Core>
#include <cstdint>

namespace alpa::kernels::internal {

void WidenF16ToF32(const Eigen::half* in, float* out, int64_t count);
void NarrowF32ToF16(const float* in, Eigen::half* out, int64_t count);

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_HALF_CONVERSION_H_
