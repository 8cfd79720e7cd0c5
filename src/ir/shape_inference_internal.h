// Private to the shape_inference*.cc files: the per-opcode rules and the checks they share.
//
// InferShape (shape_inference.cc) checks that every operand and called computation is present
// before it dispatches, so a rule may dereference them; each rule checks its operand count.
#ifndef ALPA_IR_SHAPE_INFERENCE_INTERNAL_H_
#define ALPA_IR_SHAPE_INFERENCE_INTERNAL_H_

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <string_view>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "support/status.h"

namespace alpa::ir::shape_inference_internal {

// "<opcode> %<name>: <message>".
template <typename... Args>
Status RuleError(const Instruction& instruction, fmt::format_string<Args...> format,
                 Args&&... args) {
  return InvalidArgument("{} %{}: {}", OpcodeName(instruction.opcode()), instruction.name(),
                         fmt::format(format, std::forward<Args>(args)...));
}

// Layout-free text of a shape, for messages.
inline std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

inline const Shape& OperandShape(const Instruction& instruction, int64_t i) {
  return instruction.operand(i)->shape();
}

std::vector<Shape> AllOperandShapes(const Instruction& instruction);

// Exactly `count` operands.
Status CheckOperandCount(const Instruction& instruction, int64_t count);
// At least `count` operands.
Status CheckMinOperandCount(const Instruction& instruction, int64_t count);
// Exactly `count` called computations.
Status CheckCalledCount(const Instruction& instruction, int64_t count);
// Operand i is an array (not a tuple or token).
Status CheckArrayOperand(const Instruction& instruction, int64_t i);
// Every operand is an array.
Status CheckAllArrayOperands(const Instruction& instruction);
// Operand i is a scalar of an integer type (a dynamic index).
Status CheckScalarIndexOperand(const Instruction& instruction, int64_t i);
// Every entry of `dims` (named `what` in messages) lies in [0, rank), once; with `sorted`, in
// increasing order too.
Status CheckDimensionList(const Instruction& instruction, std::string_view what,
                          const std::vector<int64_t>& dims, int64_t rank, bool sorted = false);
bool Contains(const std::vector<int64_t>& values, int64_t value);

// The signature of called computation i (its root is known to be present).
ProgramShape CalleeSignature(const Instruction& instruction, int64_t i);

// A reducer of N values (reduce, reduce-window, scatter, all-reduce): parameters are N scalar
// accumulators of `accumulator_types` then N scalar inputs of `input_types`; the root is the
// accumulator scalar (N == 1) or a tuple of them.
Status CheckReducer(const Instruction& instruction, int64_t computation_index,
                    const std::vector<DType>& accumulator_types,
                    const std::vector<DType>& input_types);

// Output size of one windowed dimension (convolution, reduce-window, select-and-scatter):
//   dilated_base   = (base - 1) * base_dilation + 1          (0 when base == 0)
//   padded         = dilated_base + pad_low + pad_high
//   dilated_window = (size - 1) * window_dilation + 1
//   output         = padded < dilated_window ? 0 : (padded - dilated_window) / stride + 1
// Errors when the window has a non-positive size, stride or dilation.
Result<std::vector<int64_t>> WindowOutputDims(const Instruction& instruction,
                                              const std::vector<int64_t>& base_dims);

// The array shape, or the tuple of shapes when there are several (variadic ops).
Shape ArrayOrTuple(std::vector<Shape> shapes);

// Per-family rules; each handles the opcodes listed.
// shape_inference_elementwise.cc: unary elementwise ops, binary elementwise ops, compare, select,
// clamp, convert, bitcast-convert, stochastic-convert, reduce-precision, map.
Result<Shape> InferUnaryShape(const Instruction& instruction);
Result<Shape> InferBinaryShape(const Instruction& instruction);
Result<Shape> InferCompareShape(const Instruction& instruction);
Result<Shape> InferSelectShape(const Instruction& instruction);
Result<Shape> InferClampShape(const Instruction& instruction);
Result<Shape> InferConvertShape(const Instruction& instruction);
Result<Shape> InferBitcastConvertShape(const Instruction& instruction);
Result<Shape> InferReducePrecisionShape(const Instruction& instruction);
Result<Shape> InferMapShape(const Instruction& instruction);
// shape_inference_data_movement.cc
Result<Shape> InferIotaShape(const Instruction& instruction);
Result<Shape> InferBroadcastShape(const Instruction& instruction);
Result<Shape> InferReshapeShape(const Instruction& instruction);
Result<Shape> InferTransposeShape(const Instruction& instruction);
Result<Shape> InferSliceShape(const Instruction& instruction);
Result<Shape> InferDynamicSliceShape(const Instruction& instruction);
Result<Shape> InferDynamicUpdateSliceShape(const Instruction& instruction);
Result<Shape> InferConcatenateShape(const Instruction& instruction);
Result<Shape> InferPadShape(const Instruction& instruction);
Result<Shape> InferReverseShape(const Instruction& instruction);
Result<Shape> InferGetDimensionSizeShape(const Instruction& instruction);
Result<Shape> InferSetDimensionSizeShape(const Instruction& instruction);
// shape_inference_conv_dot.cc
Result<Shape> InferDotShape(const Instruction& instruction);
Result<Shape> InferConvolutionShape(const Instruction& instruction);
// shape_inference_reduce.cc
Result<Shape> InferReduceShape(const Instruction& instruction);
Result<Shape> InferReduceWindowShape(const Instruction& instruction);
Result<Shape> InferSelectAndScatterShape(const Instruction& instruction);
Result<Shape> InferSortShape(const Instruction& instruction);
Result<Shape> InferTopKShape(const Instruction& instruction);
// shape_inference_indexing.cc
Result<Shape> InferGatherShape(const Instruction& instruction);
Result<Shape> InferScatterShape(const Instruction& instruction);
// shape_inference_control.cc: tuple, get-tuple-element, call, fusion, while, conditional.
Result<Shape> InferTupleShape(const Instruction& instruction);
Result<Shape> InferGetTupleElementShape(const Instruction& instruction);
Result<Shape> InferCallShape(const Instruction& instruction);
Result<Shape> InferWhileShape(const Instruction& instruction);
Result<Shape> InferConditionalShape(const Instruction& instruction);
// shape_inference_collectives.cc: all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast and their -start/-done forms.
Result<Shape> InferCollectiveShape(const Instruction& instruction);
// shape_inference_special.cc: rng, rng-bit-generator, batch-norm-*, cholesky,
// triangular-solve, after-all, add-dependency, copy-start, copy-done.
Result<Shape> InferRngShape(const Instruction& instruction);
Result<Shape> InferRngBitGeneratorShape(const Instruction& instruction);
Result<Shape> InferBatchNormShape(const Instruction& instruction);
Result<Shape> InferCholeskyShape(const Instruction& instruction);
Result<Shape> InferTriangularSolveShape(const Instruction& instruction);
Result<Shape> InferAfterAllShape(const Instruction& instruction);
Result<Shape> InferAddDependencyShape(const Instruction& instruction);
Result<Shape> InferCopyStartShape(const Instruction& instruction);
Result<Shape> InferCopyDoneShape(const Instruction& instruction);

}  // namespace alpa::ir::shape_inference_internal

#endif  // ALPA_IR_SHAPE_INFERENCE_INTERNAL_H_
