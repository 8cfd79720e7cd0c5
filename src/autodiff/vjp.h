// Vector-Jacobian products, one rule per opcode family (vjp_elementwise.cc, vjp_shape.cc,
// vjp_dot.cc, vjp_convolution.cc, vjp_window.cc, vjp_indexing.cc): for a forward instruction y =
// op(x_0, ..., x_n) and the cotangent g = dL/dy, the rule builds the cotangents dL/dx_i = g ·
// dy/dx_i as new instructions.
#ifndef ALPA_AUTODIFF_VJP_H_
#define ALPA_AUTODIFF_VJP_H_

#include <vector>

#include "ir/builder.h"
#include "ir/instruction.h"
#include "support/status.h"

namespace alpa::autodiff {

struct VjpInputs {
  const ir::Instruction& forward;                 // the forward instruction: opcode, attributes
  const std::vector<ir::Instruction*>& operands;  // its operands in the gradient computation
  ir::Instruction* output;                        // y in the gradient computation
  ir::Instruction* cotangent;                     // g, of y's shape
};

// One cotangent per operand, nullptr for an operand that has none (a predicate). Unimplemented,
// naming the opcode, when the opcode has no rule.
Result<std::vector<ir::Instruction*>> Vjp(const VjpInputs& in, ir::ComputationBuilder& b);

// The families; each returns Unimplemented for an opcode it does not own.
Result<std::vector<ir::Instruction*>> ElementwiseVjp(const VjpInputs& in,
                                                     ir::ComputationBuilder& b);
Result<std::vector<ir::Instruction*>> ShapeVjp(const VjpInputs& in, ir::ComputationBuilder& b);
Result<std::vector<ir::Instruction*>> DotVjp(const VjpInputs& in, ir::ComputationBuilder& b);
// convolution
Result<std::vector<ir::Instruction*>> ConvolutionVjp(const VjpInputs& in,
                                                     ir::ComputationBuilder& b);
// reduce-window (add and max reducers)
Result<std::vector<ir::Instruction*>> WindowVjp(const VjpInputs& in, ir::ComputationBuilder& b);
// pad, reverse, dynamic-slice, dynamic-update-slice, gather, scatter, reduce with max/min
Result<std::vector<ir::Instruction*>> IndexingVjp(const VjpInputs& in, ir::ComputationBuilder& b);

// An array of `like`'s shape with every element `value`.
ir::Instruction* Full(ir::ComputationBuilder& b, const ir::Instruction* like, double value);
// Sum of `x` over `dimensions` (a reduce with an add reducer).
ir::Instruction* SumOver(ir::ComputationBuilder& b, ir::Instruction* x,
                         std::vector<int64_t> dimensions);

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_VJP_H_
