// The executor's kernel choice: for an instruction that one of the kernels layer's fast kernels
// computes as the reference interpreter defines it, that kernel; for anything else none, and the
// interpreter's handler runs the instruction. Chosen once per instruction when its instruction
// list is compiled: shapes, element types and attributes are static.
//
// Fast, with these element types and attributes ("float" is f32, f16 or bf16; the 16-bit types
// are computed in f32 and rounded once, kernels/elementwise.h):
//   elementwise   float negate, abs, exponential, log, tanh, sqrt, rsqrt, logistic, sine,
//                 cosine, add, subtract, multiply, divide, maximum, minimum, power (reading
//                 broadcasts in place, these and the loop ops run as loops: fused_loops.h);
//                 compare of floats (default or FLOAT comparison) and s32 (default or SIGNED);
//                 and, or of pred; clamp of s32 (scalar or array bounds); select of 4- or 2-byte
//                 elements by a pred array; convert between floats, of pred to a float and of
//                 s32 to f32; iota of s32 and f32
//   constant      any element type: a copy of its value
//   data movement any element type: broadcast, transpose, reshape, bitcast, copy, slice,
//                 dynamic-slice by s32 scalar indices, reverse, concatenate, pad without
//                 negative padding, and the identities
//                 (convert to the same type, the layer-boundary custom-call)
//   reduce        one float or s32 input, an add, maximum or minimum reducer, the reduced
//                 dimensions one contiguous range once size-1 dimensions are set aside (a 16-bit
//                 sum accumulates in f32, kernels/reduce.h)
//   indexing      a gather or a float scatter-add whose indices (s32) each pick a whole row of
//                 a rank-2 table: the embedding lookup and its gradient (kernels/indexing.h)
//   dot           float operands and result of one type: the interpreter's matmul
//                 (kernels/matmul.h) on operands transposed in parallel, or read in place when
//                 already in order
// A kernel is chosen only for an instruction whose shape rule holds (ir/shape_inference.h), and
// for elementwise ops whose operands all have the result's dimensions (no implicit broadcast). It
// trusts its operands to have the shapes of the instruction's operands, as the executor's values
// do: the arguments are checked against the parameters, and every kernel returns its
// instruction's shape.
//
// Results equal the interpreter's bit for bit, except for exponential, log and tanh (Eigen's
// vectorised approximations, a few ulp apart), the row sums of reduce (added in another order),
// 16-bit dots and sums (within a 16-bit ulp); tests/runtime/fast_kernels_test.cc bounds them
// against the interpreter.
#ifndef ALPA_RUNTIME_FAST_KERNELS_H_
#define ALPA_RUNTIME_FAST_KERNELS_H_

#include <vector>

#include "ir/instruction.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::runtime {

// Computes an instruction's value from its operands' values, in operand order.
using FastKernel = Result<ir::Literal> (*)(const ir::Instruction& instruction,
                                           const std::vector<const ir::Literal*>& operands);

// The fast kernel of `instruction`, or nullptr when the interpreter must run it.
FastKernel SelectFastKernel(const ir::Instruction& instruction);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_FAST_KERNELS_H_
