// Strategies of ops that cut, pad or paste along some dims (reference/alpa.md 2.a.4, kPad,
// kSlice, kConcatenate, kDynamicSlice, kDynamicUpdateSlice): slice, pad, concatenate,
// dynamic-slice and dynamic-update-slice.
//
// Each follows its main operand (one strategy per operand strategy, follow_util.h): the operand
// of slice, pad and dynamic-slice, the buffer (operand 0) of dynamic-update-slice, and for
// concatenate the operand ChooseOperandToFollow picks. A dim whose extent or content position
// changes must be unsplit (GSPMD would need halo exchanges or a dynamic owner): its axes are
// dropped from the followed spec, so the edge all-gathers them; every other dim keeps its axes.
//   slice                 dims whose extent changes ([0:n:1] keeps it);
//   pad                   dims with any low, high or interior padding (a shift keeps the extent);
//   concatenate           the concatenated dim; the other operands are needed in the same spec;
//   dynamic-slice         dims whose slice size is not the whole dim (a whole one clamps its start
//                         to 0); the start indices are replicated scalars;
//   dynamic-update-slice  dims where the update is smaller than the buffer; the update is needed
//                         in the buffer's spec, the start indices replicated.
// e.g. slice f32[8,16] [S0,S1] to [0:8, 0:4]: dim 1 changes, so the operand is needed as [S0,R]
// and the result is [S0,R].
//
// Partial sums: slice, dynamic-slice, concatenate and dynamic-update-slice are linear in their
// data operands together (a slice of a sum is the sum of the slices), so they keep the followed
// operand's partial axes and need the other data operands partial alike. Pad is not (the padding
// value would be summed once per device) and needs a non-partial operand.
#ifndef ALPA_SHARDING_SLICE_STRATEGIES_H_
#define ALPA_SHARDING_SLICE_STRATEGIES_H_

#include "ir/instruction.h"
#include "ir/opcode.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The opcodes SliceStrategies handles.
bool IsSliceStrategyOpcode(ir::Opcode opcode);

// Requires IsSliceStrategyOpcode(instruction.opcode()). Errors: those of the compute cost model.
Result<StrategySet> SliceStrategies(const ir::Instruction& instruction, const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_SLICE_STRATEGIES_H_
