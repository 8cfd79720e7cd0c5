// Shape inference: the result shape each opcode's rule gives for an instruction's operands.
//
// The rules follow XLA's ShapeInference (xla/service/shape_inference.cc) and its HLO verifier:
// operands of elementwise ops have equal dims and dtypes, dot contracts equal sizes, and so on.
// Where the HLO text carries part of the result that no operand or attribute determines, the
// instruction's declared shape supplies it:
//   - the element type of convert, bitcast-convert, stochastic-convert, dot and convolution
//     (XLA's preferred_element_type);
//   - the dims of broadcast, reshape, iota and rng;
//   - the output shape of rng-bit-generator, and the whole shape of opcodes without a rule
//     (parameter, custom-call, bitcast, fft, send/recv, infeed/outfeed, async-*, dynamic-reshape,
//     rng-get-and-update-state), which is returned unchanged.
// all-gather and reduce-scatter scale one dimension by the replica group size: the size of the
// first group in Attributes::replica_groups. When the groups are empty (every device takes part)
// the participant count is unknown here, so the declared dimension is accepted when it is a
// multiple (all-gather) or a divisor (reduce-scatter) of the operand's.
//
// Layouts are ignored. Checking the called computations' signatures (reduce's reducer, while's
// condition and body, conditional's branches, ...) is part of the rules.
#ifndef ALPA_IR_SHAPE_INFERENCE_H_
#define ALPA_IR_SHAPE_INFERENCE_H_

#include "ir/instruction.h"
#include "ir/shape.h"
#include "support/status.h"

namespace alpa::ir {

// The result shape the instruction's opcode rule gives for its operands' shapes, attributes and
// called computations. Errors name the instruction and the broken rule, e.g.
// "dot %d: lhs contracting dimension 1 has size 16 but rhs contracting dimension 0 has size 8".
Result<Shape> InferShape(const Instruction& instruction);

// False for the opcodes whose declared shape InferShape returns unchanged (see above).
bool HasShapeRule(Opcode opcode);

}  // namespace alpa::ir

#endif  // ALPA_IR_SHAPE_INFERENCE_H_
