// Copies between strided views of raw buffers: the one kernel behind broadcast, transpose, slice,
// reverse, pad and concatenate (the runtime derives the strides from each instruction).
//
// For every index i < dims (row-major order):
//   out[sum_d i_d * out_strides[d]] = in[sum_d i_d * in_strides[d]]
// with strides counted in elements. An input stride of 0 repeats an element (broadcast), a
// negative one walks backwards (reverse; the caller points `in` at the first element read). The
// written positions must be distinct and must not overlap the input.
//
// Adjacent dimensions that are contiguous in both views are merged first, so the innermost loop is
// as long as possible: a memcpy when both views are dense there, a fill when the input repeats
// one element, an element loop otherwise. Rows are split over the calling thread's OpenMP team.
#ifndef ALPA_KERNELS_STRIDED_COPY_H_
#define ALPA_KERNELS_STRIDED_COPY_H_

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace alpa::kernels {

struct StridedView {
  std::vector<int64_t> dims;         // the index space, shared by both views
  std::vector<int64_t> in_strides;   // elements; one per dimension
  std::vector<int64_t> out_strides;  // elements; one per dimension
};

// InvalidArgument when the strides do not have one entry per dimension, a dimension is negative,
// or the element size is not 1, 2, 4, 8 or 16 bytes.
Status StridedCopy(int64_t element_bytes, const StridedView& view, const void* in, void* out);

// out[i] = *value for i < n (`value` points to one element of `element_bytes`, as above).
Status Fill(int64_t element_bytes, const void* value, void* out, int64_t n);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_STRIDED_COPY_H_
