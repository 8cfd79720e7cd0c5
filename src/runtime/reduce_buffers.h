// The element-wise reduction the communicators share: combines the same range of several buffers
// into one, as an all-reduce or reduce-scatter does for its block.
#ifndef ALPA_RUNTIME_REDUCE_BUFFERS_H_
#define ALPA_RUNTIME_REDUCE_BUFFERS_H_

#include <cstdint>
#include <span>

#include "ir/dtype.h"
#include "runtime/communicator.h"
#include "support/status.h"

namespace alpa::runtime {

// Ok when `op` can reduce elements of `dtype` (f16, bf16, f32, f64, s8-s64, u8-u64).
Status CheckReduction(ir::DType dtype, ReduceOp op);

// output[k] = op(inputs[0][k], inputs[1][k], ...) for k < count, the inputs combined in order.
// f16 and bf16 accumulate in f32 and round once; integer sums wrap modulo 2^bits; max and min
// propagate NaN. `output` may be one of the inputs (a tile of every input is read before that
// tile of the output is written). Requires CheckReduction(dtype, op) to have passed and at least
// one input.
void ReduceElements(ir::DType dtype, ReduceOp op, std::span<const void* const> inputs, void* output,
                    int64_t count);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_REDUCE_BUFFERS_H_
