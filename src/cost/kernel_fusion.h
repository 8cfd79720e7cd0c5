// Kernel fusion as a fusing compiler (XLA on GPUs) does it, for the cost and memory models: which
// values are computed inside the kernels that read them, so that they are never written to device
// memory, never read back from it, and never allocated.
//
// A value v is fused into its readers when
//   - v is loop-fusible: elementwise arithmetic (ir::IsElementwiseArithmetic: compare, select,
//     clamp and convert included), bitcast-convert, broadcast, iota, reshape, transpose, slice,
//     dynamic-slice, pad, concatenate or reverse;
//   - v is not its computation's root and has at least one reader;
//   - every reader can host it: a loop-fusible instruction, a reduce (XLA's input fusion), or a
//     dynamic-update-slice; for reshape and transpose also a dot or convolution (layout
//     assignment and XLA's TransposeFolding make them operand layouts of the library call);
//   - it has a single reader, or it is cheap enough to recompute in each reader's kernel (XLA's
//     duplication rule, as its GPU fusion applies it: log, tanh, logistic, erf, expm1, log1p, the
//     trigonometric functions, cbrt, remainder, power and atan2 are not; divide, sqrt, rsqrt and
//     exp are not either unless they compute in f32 or f16).
// Everything else is materialized: collectives, dots and convolutions, reductions, parameters,
// constants, control flow, and values read by any of those.
//
// A kernel is a materialized instruction r with the fused values it reads, transitively. It
// reads each materialized value its members read once, and writes r's result:
//
//   bytes(kernel r) = bytes(r) + sum over materialized values m read inside the kernel of read(m)
//   read(m)         = bytes(m) if a member reads m other than as the sliced operand of a slice
//                     or dynamic-slice, else min(bytes(m), sum of those slices' results)
//
// so a fused broadcast costs its operand's bytes, a slice its result's, and a chain of
// elementwise operations one pass over its inputs and output. A fused value read by several
// kernels is recomputed in each, as XLA duplicates it: each of them reads its inputs.
#ifndef ALPA_COST_KERNEL_FUSION_H_
#define ALPA_COST_KERNEL_FUSION_H_

#include <unordered_set>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace alpa::cost {

// Values computed inside their readers' kernels (none of them is materialized).
using FusedValues = std::unordered_set<const ir::Instruction*>;

// No value fused: every instruction is its own kernel (the default wherever a fusion is taken).
const FusedValues& NoFusion();

// The values of `computation` (its own instructions, not those of called computations) that a
// fusing compiler keeps inside kernels, by the rules above.
FusedValues FuseIntoReaders(const ir::Computation& computation);

// Bytes the kernel rooted at `root` (an instruction not in `fused`) reads and writes, by the
// formula above. With no fused values, each instruction is its own kernel: it reads each distinct
// operand once (a slice only what it keeps) and writes its result.
double KernelBytes(const ir::Instruction& root, const FusedValues& fused);

}  // namespace alpa::cost

#endif  // ALPA_COST_KERNEL_FUSION_H_
