// Internal to the runtime's kernel choice (fast_kernels.h): what its files share. The
// elementwise, reduce and dot kernels and the choice itself are in fast_kernels.cc, the data
// movement (strided copies) in fast_data_movement.cc, gathers and scatters of rows in
// fast_indexing.cc, the fused elementwise loops in fused_loops.cc.
#ifndef ALPA_RUNTIME_FAST_KERNELS_INTERNAL_H_
#define ALPA_RUNTIME_FAST_KERNELS_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"
#include "kernels/elementwise.h"
#include "runtime/fast_kernels.h"

namespace alpa::runtime::internal {

// The IR names the kernel files use throughout.
using ir::DType;
using ir::Literal;
using ir::Opcode;
using ir::Shape;

using Operands = std::vector<const ir::Literal*>;

inline std::vector<int64_t> Strides(const ir::Shape& shape) {
  return ir::RowMajorStrides(shape.dims());
}

inline bool IsArrayOf(const ir::Shape& shape, ir::DType dtype) {
  return shape.IsArray() && shape.dtype() == dtype;
}

// The elementwise kernels' functions of the float unary and binary opcodes (negate ... cosine,
// add ... power), or nullopt for any other opcode.
std::optional<kernels::UnaryFn> UnaryFnOf(ir::Opcode opcode);
std::optional<kernels::BinaryFn> BinaryFnOf(ir::Opcode opcode);

// The strided-copy kernel of a broadcast, transpose, reshape, bitcast, copy, slice, reverse,
// concatenate, pad or iota (or an identity: convert to its own type, a layer boundary), or
// nullptr. The instruction's shape rule holds (SelectFastKernel checked it).
FastKernel SelectDataMovement(const ir::Instruction& instruction);

// The row-gather or row-scatter-add kernel of a gather or scatter (fast_indexing.cc), or nullptr.
FastKernel SelectIndexing(const ir::Instruction& instruction);

}  // namespace alpa::runtime::internal

#endif  // ALPA_RUNTIME_FAST_KERNELS_INTERNAL_H_
