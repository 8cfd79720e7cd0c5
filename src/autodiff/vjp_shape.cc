// Rules of the ops that move or sum elements. With cotangent g of the result:
//   broadcast   dx = sum of g over the result dimensions the broadcast added
//   reshape     dx = reshape(g)            transpose(p)  dx = transpose(g, p^-1)     copy  dx = g
//   slice       dx = pad(g, 0) with low = start, interior = stride - 1 and high the rest of x
//   concatenate dx_i = the slice of g that operand i filled
//   reduce(add) dx = broadcast(g) back over the reduced dimensions; d init = sum of g
#include <algorithm>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;
using ir::Opcode;

namespace {

Instruction* BroadcastVjp(const Instruction& forward, Instruction* x, Instruction* g,
                          ir::ComputationBuilder& b) {
  // x's dimension i is the result's mapped[i] (same size, XLA); the others are new.
  const std::vector<int64_t>& mapped = forward.attributes().dimensions;
  std::vector<int64_t> added;
  for (int64_t d = 0; d < forward.shape().rank(); ++d) {
    if (std::find(mapped.begin(), mapped.end(), d) == mapped.end()) added.push_back(d);
  }
  // XLA requires `mapped` increasing, so what is left after the sum is in x's order.
  return SumOver(b, g, added);
}

Instruction* SliceVjp(const Instruction& forward, Instruction* x, Instruction* g,
                      ir::ComputationBuilder& b) {
  std::vector<ir::PaddingDim> padding;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    const ir::SliceDim& s = forward.attributes().slice[d];
    const int64_t n = g->shape().dim(d);
    if (n == 0) return Full(b, x, 0);
    const int64_t last = s.start + (n - 1) * s.stride;
    padding.push_back({s.start, x->shape().dim(d) - last - 1, s.stride - 1});
  }
  return b.Pad(g, b.ConstantScalar(g->shape().dtype(), 0), std::move(padding));
}

std::vector<Instruction*> ConcatenateVjp(const Instruction& forward,
                                         const std::vector<Instruction*>& operands, Instruction* g,
                                         ir::ComputationBuilder& b) {
  const int64_t dimension = forward.attributes().dimensions[0];
  std::vector<Instruction*> cotangents;
  int64_t offset = 0;
  for (Instruction* operand : operands) {
    std::vector<ir::SliceDim> slice;
    for (int64_t d = 0; d < g->shape().rank(); ++d) slice.push_back({0, g->shape().dim(d), 1});
    const int64_t size = operand->shape().dim(dimension);
    slice[dimension] = {offset, offset + size, 1};
    cotangents.push_back(b.Slice(g, std::move(slice)));
    offset += size;
  }
  return cotangents;
}

Result<std::vector<Instruction*>> ReduceVjp(const Instruction& forward, Instruction* x,
                                            Instruction* g, ir::ComputationBuilder& b) {
  const ir::Computation* reducer = forward.called_computations()[0];
  if (forward.operand_count() != 2 || reducer->root()->opcode() != Opcode::kAdd) {
    return Unimplemented("only a single-input reduce with an add reducer has a gradient rule");
  }
  const std::vector<int64_t>& reduced = forward.attributes().dimensions;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  std::vector<int64_t> all(static_cast<size_t>(g->shape().rank()));
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return std::vector<Instruction*>{b.Broadcast(g, x->shape().dims(), kept), SumOver(b, g, all)};
}

}  // namespace

Result<std::vector<Instruction*>> ShapeVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const Instruction& forward = in.forward;
  Instruction* x = in.operands.empty() ? nullptr : in.operands[0];
  Instruction* g = in.cotangent;
  switch (forward.opcode()) {
    case Opcode::kBroadcast:
      return std::vector<Instruction*>{BroadcastVjp(forward, x, g, b)};
    case Opcode::kReshape:
      return std::vector<Instruction*>{b.Reshape(g, x->shape().dims())};
    case Opcode::kCopy:
      return std::vector<Instruction*>{g};
    case Opcode::kTranspose: {
      const std::vector<int64_t>& permutation = forward.attributes().dimensions;
      std::vector<int64_t> inverse(permutation.size());
      for (size_t i = 0; i < permutation.size(); ++i) {
        inverse[permutation[i]] = static_cast<int64_t>(i);
      }
      return std::vector<Instruction*>{b.Transpose(g, std::move(inverse))};
    }
    case Opcode::kSlice:
      return std::vector<Instruction*>{SliceVjp(forward, x, g, b)};
    case Opcode::kConcatenate:
      return ConcatenateVjp(forward, in.operands, g, b);
    case Opcode::kReduce:
      return ReduceVjp(forward, x, g, b);
    default:
      return Unimplemented("no gradient rule for {}", ir::OpcodeName(forward.opcode()));
  }
}

}  // namespace alpa::autodiff
