// Internal to the interpreter: the handlers of each op family, called by the evaluator core.
//
// A handler receives the instruction and its operand values (one Literal per operand, already
// evaluated, shapes as declared by the operand instructions) and returns the instruction's value.
// Errors say what is wrong; the core prefixes them with the instruction and computation names.
#ifndef ALPA_INTERP_OPS_H_
#define ALPA_INTERP_OPS_H_

#include <cstdint>
#include <vector>

#include "interp/device_context.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::interp::internal {

using Operands = std::vector<const ir::Literal*>;

// State of one evaluation that outlives a single instruction.
struct EvalContext {
  // Advanced by every executed rng / rng-bit-generator-free random op, so that two rng ops (or
  // one rng op in two loop iterations) draw different values, deterministically.
  uint64_t rng_counter = 0;
  // Nesting of called computations; bounded so that a malformed (cyclic) call graph is an error,
  // not a stack overflow.
  int64_t call_depth = 0;
  // The device this evaluation runs as (one device, partition 0, unless EvaluateModule was given
  // a DeviceContext).
  DeviceContext device;
};

// Evaluates `computation` on `arguments` (checked against the parameter shapes).
Result<ir::Literal> EvaluateComputationIn(const ir::Computation& computation,
                                          std::vector<ir::Literal> arguments, EvalContext& context);

// The value of one instruction of any opcode, given its operands' values (evaluator.cc).
Result<ir::Literal> Dispatch(const ir::Instruction& instruction, const Operands& operands,
                             EvalContext& context);

// unary.cc / binary.cc: elementwise arithmetic, logic, real/imag/complex.
Result<ir::Literal> EvaluateUnary(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateBinary(const ir::Instruction& instruction, const Operands& operands);
// compare_select.cc
Result<ir::Literal> EvaluateCompare(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateSelect(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateClamp(const ir::Instruction& instruction, const Operands& operands);
// convert.cc
Result<ir::Literal> ConvertLiteral(const ir::Literal& input, ir::DType to);
Result<ir::Literal> EvaluateConvert(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateBitcastConvert(const ir::Instruction& instruction,
                                           const Operands& operands);
// data_movement.cc
Result<ir::Literal> EvaluateBroadcast(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateReshape(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateTranspose(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateSlice(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateReverse(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateConcatenate(const ir::Instruction& instruction,
                                        const Operands& operands);
Result<ir::Literal> EvaluatePad(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateIota(const ir::Instruction& instruction);
// Result dimension i is dimension permutation[i] of `input` (a valid permutation).
ir::Literal Permute(const ir::Literal& input, const std::vector<int64_t>& permutation);
// dynamic_slice.cc
Result<ir::Literal> EvaluateDynamicSlice(const ir::Instruction& instruction,
                                         const Operands& operands);
Result<ir::Literal> EvaluateDynamicUpdateSlice(const ir::Instruction& instruction,
                                               const Operands& operands);
// reduce.cc
Result<ir::Literal> EvaluateReduce(const ir::Instruction& instruction, const Operands& operands,
                                   EvalContext& context);
// reduce_window.cc
Result<ir::Literal> EvaluateReduceWindow(const ir::Instruction& instruction,
                                         const Operands& operands, EvalContext& context);
Result<ir::Literal> EvaluateSelectAndScatter(const ir::Instruction& instruction,
                                             const Operands& operands, EvalContext& context);
// gather.cc / scatter.cc
Result<ir::Literal> EvaluateGather(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateScatter(const ir::Instruction& instruction, const Operands& operands,
                                    EvalContext& context);
// sort.cc
Result<ir::Literal> EvaluateSort(const ir::Instruction& instruction, const Operands& operands,
                                 EvalContext& context);
Result<ir::Literal> EvaluateTopK(const ir::Instruction& instruction, const Operands& operands);
// reduce_precision.cc
Result<ir::Literal> EvaluateReducePrecision(const ir::Instruction& instruction,
                                            const Operands& operands);
// control_flow.cc: call, fusion, while, conditional, map.
Result<ir::Literal> EvaluateCall(const ir::Instruction& instruction, const Operands& operands,
                                 EvalContext& context);
Result<ir::Literal> EvaluateWhile(const ir::Instruction& instruction, const Operands& operands,
                                  EvalContext& context);
Result<ir::Literal> EvaluateConditional(const ir::Instruction& instruction,
                                        const Operands& operands, EvalContext& context);
Result<ir::Literal> EvaluateMap(const ir::Instruction& instruction, const Operands& operands,
                                EvalContext& context);
// dot.cc / convolution.cc: through the kernels layer.
Result<ir::Literal> EvaluateDot(const ir::Instruction& instruction, const Operands& operands);
Result<ir::Literal> EvaluateConvolution(const ir::Instruction& instruction,
                                        const Operands& operands);
// batch_norm.cc
Result<ir::Literal> EvaluateBatchNormTraining(const ir::Instruction& instruction,
                                              const Operands& operands);
Result<ir::Literal> EvaluateBatchNormInference(const ir::Instruction& instruction,
                                               const Operands& operands);
Result<ir::Literal> EvaluateBatchNormGrad(const ir::Instruction& instruction,
                                          const Operands& operands);
// rng.cc
Result<ir::Literal> EvaluateRng(const ir::Instruction& instruction, const Operands& operands,
                                EvalContext& context);
Result<ir::Literal> EvaluateRngBitGenerator(const ir::Instruction& instruction,
                                            const Operands& operands);
// collectives.cc: collectives (single-participant ones in place, the others through
// device_collectives.cc when the program runs on several devices), async wrappers.
Result<ir::Literal> EvaluateCollective(const ir::Instruction& instruction, const Operands& operands,
                                       EvalContext& context);
Result<ir::Literal> EvaluateAsync(const ir::Instruction& instruction, const Operands& operands,
                                  EvalContext& context);
// device_collectives.cc: a collective run by `device` with its peers through its backend. The
// value returned is the result proper (a -start's tuple wrapping is left to the caller).
Result<ir::Literal> EvaluateDeviceCollective(const ir::Instruction& instruction,
                                             const Operands& operands, const DeviceContext& device);
// custom_call.cc: the targets with a known single-device meaning.
Result<ir::Literal> EvaluateCustomCall(const ir::Instruction& instruction,
                                       const Operands& operands);

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_OPS_H_
