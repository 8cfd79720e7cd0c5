// Strategies of elementwise ops (reference/alpa.md 2.a.4, "unary/binary/ternary elementwise"):
// unary and binary arithmetic and logic, convert, bitcast-convert, reduce-precision,
// stochastic-convert, compare, select, clamp and map.
//
// The op follows one operand (ChooseOperandToFollow in follow_util.h: the operand that can be
// split the most, not a broadcast, with the most strategies, the first), with one strategy per
// strategy of that operand: the result takes the operand's spec, and every other operand is
// needed in the same spec (its edge pays the resharding). Rank-0 operands of a ranked op (the
// scalar predicate of select, the scalar bounds of clamp) are needed replicated.
//
// Partial sums: an op that is linear in its operands taken together,
//   f(sum_k x_k, sum_k y_k) = sum_k f(x_k, y_k),
// keeps the followed operand's partial axes, and needs every other operand partial over the same
// axes (a replicated operand becomes partial for free, resharding.h): add, subtract, negate and
// convert between floating-point types. Every other op needs non-partial operands: the followed
// spec loses its partial axes, so the followed operand's edge pays the all-reduce (compare(x, 0)
// of a partial x compares the sum, not the pieces).
//
// bitcast-convert between types of different widths adds (narrowing) or removes (widening) a
// trailing dimension: the added one is unsplit, the removed one must be unsplit in the operand.
//
//   add(x, y) of f32[8,16], x with strategies [S0,R], [R,S1], [R,R] P1 (a dot's partial sum):
//     3 strategies following x: [S0,R] needing y [S0,R]; [R,S1] needing y [R,S1]; [R,R] P1
//     needing y [R,R] P1. For multiply(x, y) the third is [R,R], needing x and y [R,R].
#ifndef ALPA_SHARDING_ELEMENTWISE_STRATEGIES_H_
#define ALPA_SHARDING_ELEMENTWISE_STRATEGIES_H_

#include "ir/instruction.h"
#include "ir/opcode.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The opcodes ElementwiseStrategies handles.
bool IsElementwiseStrategyOpcode(ir::Opcode opcode);

// Requires IsElementwiseStrategyOpcode(instruction.opcode()) and an array result. Errors: those
// of the compute cost model.
Result<StrategySet> ElementwiseStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_ELEMENTWISE_STRATEGIES_H_
