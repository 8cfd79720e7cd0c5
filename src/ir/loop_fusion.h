// Loop fusion on the CPU runtime: chains of elementwise ops run as one loop over cache-sized
// tiles (kernels/fused_loop.h), so the values inside a chain are never written to memory, never
// read back and never allocated. A chain of k ops over arrays of n elements then costs one pass
// (its inputs read once, its output written once) instead of k.
//
// A loop op is an elementwise op whose operands and result all have one shape's dimensions and
// that the loop kernels compute:
//   - negate, abs, exponential, log, tanh, sqrt, rsqrt, logistic, sine, cosine, add, subtract,
//     multiply, divide, maximum, minimum or power of f32, f16 or bf16 arrays of one type;
//   - compare of two float arrays of one type (the default or FLOAT comparison), giving pred;
//   - select of a float type by a pred array;
//   - convert to a float type from another float type or from pred.
// A loop op reads the broadcasts its computation reads in place (broadcast_folding.h) through
// strides: a scalar's as one repeated value, a row's or a column's as repeated runs.
//
// A value v is computed inside its reader's loop when
//   - v and its reader r are both loop ops;
//   - v is not its computation's root, and r is its only reader (r may read it more than once);
//   - fusing it does not raise the bytes live at any step of the schedule (below).
// A loop is a loop op that is not itself fused, with the values fused into it, transitively: a
// tree of ops whose leaves are the loop's inputs (arrays of its dimensions, or the operands of
// the broadcasts it reads in place). It runs at its root's place in the schedule (the post
// order), where it reads every input, so the memory model counts each fused value as an alias
// whose operands live until the root ran (cost/liveness.h), and the cost model prices the loop as
// one kernel (cost/kernel_fusion.h's formula: its inputs read once, its result written once). A
// loop op that reads a broadcast in place runs as a loop even with no value fused into it.
//
// Running a loop at its root's step keeps each input alive until then, where the ops one by one
// would free an input after its last reader: a multiply of two dying arrays, read much later by
// an add, would hold two buffers where it held one. Loops are therefore grown from their roots
// (latest first), offering each value with the values that may join below it, else alone, and
// a value joins only if the loop still never raises the bytes live at any step (the formula in
// loop_fusion.cc): a loop only ever lowers the peak. A parameter counts as freed after its last
// reader, as a caller that donates it frees it.
//
// Each op of a loop runs the kernel it would run alone, rounding 16-bit results after each op as
// the interpreter does, so fusing changes no byte of any result.
//
// A fusing compiler (XLA on GPUs, cost/kernel_fusion.h) fuses every such value as well: on those
// devices these values are a subset of the ones it keeps inside kernels.
#ifndef ALPA_IR_LOOP_FUSION_H_
#define ALPA_IR_LOOP_FUSION_H_

#include <unordered_set>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace alpa::ir {

// The unary (negate ... cosine) and binary (add ... power) opcodes of the first rule above.
bool IsLoopUnaryOpcode(Opcode opcode);
bool IsLoopBinaryOpcode(Opcode opcode);

// Whether `instruction` is a loop op, by the first rule above.
bool IsLoopOp(const Instruction& instruction);

// The values of `computation` computed inside their readers' loops, by the rules above.
std::unordered_set<const Instruction*> LoopFusedValues(const Computation& computation);

}  // namespace alpa::ir

#endif  // ALPA_IR_LOOP_FUSION_H_
