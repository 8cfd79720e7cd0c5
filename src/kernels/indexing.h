// Row gathers and row scatter-adds: the embedding lookup of a training step and its gradient, as
// XLA's gather and scatter define them when every index picks one whole row of a [rows, width]
// table (offset/window dimension last, the index vector implicit).
//
// Gather clamps each index to [0, rows - 1]; scatter skips an update whose index is outside
// [0, rows) (XLA's scatter drops out-of-bounds windows, it does not clamp). Updates are added in
// index order, so repeated indices accumulate in the interpreter's order and the bytes equal
// its; the work is split over the OpenMP team by columns, never by updates.
#ifndef ALPA_KERNELS_INDEXING_H_
#define ALPA_KERNELS_INDEXING_H_

#include <cstdint>

#include "ir/dtype.h"

namespace alpa::kernels {

// out[i, :] = table[clamp(index[i], 0, rows - 1), :] for i < n; rows of `row_bytes` bytes.
void GatherRows(const void* table, int64_t rows, int64_t row_bytes, const int32_t* index, int64_t n,
                void* out);

// table[index[i], :] += updates[i, :] for i < n in order, skipping indices outside [0, rows).
void ScatterAddRowsF32(float* table, int64_t rows, int64_t width, const int32_t* index, int64_t n,
                       const float* updates);

// The same over an f16 or bf16 (`dtype`) table and updates, each addition computed in f32 and
// rounded to 16 bits, as the interpreter applies a 16-bit add reducer: the interpreter's bytes.
void ScatterAddRows16(ir::DType dtype, void* table, int64_t rows, int64_t width,
                      const int32_t* index, int64_t n, const void* updates);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_INDEXING_H_
