#include "autodiff/vjp.h"

#include "ir/layer_boundary.h"

namespace alpa::autodiff {

using ir::Instruction;
using ir::Opcode;

Result<std::vector<Instruction*>> Vjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const Opcode opcode = in.forward.opcode();
  if (ir::IsElementwiseUnary(opcode) || ir::IsElementwiseBinary(opcode) ||
      opcode == Opcode::kSelect || opcode == Opcode::kConvert) {
    return ElementwiseVjp(in, b);
  }
  switch (opcode) {
    case Opcode::kDot:
      return DotVjp(in, b);
    case Opcode::kConvolution:
      return ConvolutionVjp(in, b);
    case Opcode::kReduceWindow:
      return WindowVjp(in, b);
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kScatter:
      return IndexingVjp(in, b);
    case Opcode::kCustomCall: {
      // A forward layer boundary's cotangent leaves backward layer k + 1 for backward layer k:
      // the twin marker ties the two passes of layer k together.
      const std::optional<ir::LayerBoundary> boundary = ir::AsLayerBoundary(in.forward);
      if (!boundary.has_value() || boundary->backward) break;
      return std::vector<Instruction*>{
          ir::EmitLayerBoundary(b, in.cotangent, {.layer = boundary->layer, .backward = true})};
    }
    case Opcode::kReduce: {
      const ir::Opcode reducer = in.forward.called_computations()[0]->root()->opcode();
      if (reducer == Opcode::kMaximum || reducer == Opcode::kMinimum) return IndexingVjp(in, b);
      return ShapeVjp(in, b);
    }
    default:
      break;
  }
  return ShapeVjp(in, b);
}

Instruction* Full(ir::ComputationBuilder& b, const Instruction* like, double value) {
  const ir::Shape& shape = like->shape();
  return b.Broadcast(b.ConstantScalar(shape.dtype(), value), shape.dims(), {});
}

Instruction* SumOver(ir::ComputationBuilder& b, Instruction* x, std::vector<int64_t> dimensions) {
  if (dimensions.empty()) return x;
  return b.Sum(x, std::move(dimensions));
}

}  // namespace alpa::autodiff
