// Rules of the ops that pick elements by position. With cotangent g of the result y:
//   pad(x, v)       x's elements sit in y at low + i * (interior + 1); negative low/high crop
//                   that padded array, so g is first padded back with zeros where it was cropped:
//                   dx = slice(pad(g, 0, low- = max(-low, 0), high- = max(-high, 0)),
//                              start = max(low, 0), stride = interior + 1);
//                   dv = sum(g) - sum(dx) (every other element of y is v).
//   reverse         dx = reverse(g, same dimensions).
//   dynamic-slice   dx = dynamic-update-slice(0 like x, g, starts): both ops clamp the starts to
//                   [0, dim - size] the same way, so g lands where the slice was read.
//   dynamic-update-slice(x, u, starts)
//                   dx = dynamic-update-slice(g, 0 like u, starts) (overwritten elements get
//                   nothing); du = dynamic-slice(g, starts, u's dims).
//   reduce max/min  dx = g * eq / count, eq = (x == broadcast(y)), count = sum of eq over the
//                   reduced dims: ties share g equally (JAX's convention for reduce_max). count is
//                   at least 1 so that a y that came from init gives dx = 0 rather than NaN. init
//                   gets no cotangent (nullptr: Grad reports it if init is on the path).
//   gather          dx = scatter-add of g into zeros of x's shape with the mirrored dimension
//                   numbers (JAX's _gather_transpose_rule). Gather clamps each start to
//                   [0, dim - slice_size] while scatter drops out-of-bounds windows, so the
//                   indices are clamped explicitly first.
//   scatter (add)   d operand = g; d updates = gather of g at the same indices with the mirrored
//                   numbers, times 0 for an update window scatter dropped (start out of bounds).
// Index operands (starts, indices) get nullptr: they are integers.
#include <algorithm>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;
using ir::Opcode;

namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::vector<int64_t> AllDims(const Instruction* x) {
  std::vector<int64_t> all(static_cast<size_t>(x->shape().rank()));
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return all;
}

Instruction* PadVjpOperand(const Instruction& forward, Instruction* x, Instruction* g,
                           ir::ComputationBuilder& b) {
  const std::vector<ir::PaddingDim>& padding = forward.attributes().padding;
  std::vector<ir::PaddingDim> uncrop;
  std::vector<ir::SliceDim> slice;
  bool cropped = false;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    const ir::PaddingDim& p = padding[static_cast<size_t>(d)];
    const int64_t n = x->shape().dim(d);
    if (n == 0) return Full(b, x, 0);
    uncrop.push_back({std::max<int64_t>(-p.low, 0), std::max<int64_t>(-p.high, 0), 0});
    cropped = cropped || p.low < 0 || p.high < 0;
    const int64_t start = std::max<int64_t>(p.low, 0);
    slice.push_back({start, start + (n - 1) * (p.interior + 1) + 1, p.interior + 1});
  }
  // After the uncrop g has the shape of pad(x) with the non-negative parts of low/high only.
  Instruction* full =
      cropped ? b.Pad(g, b.ConstantScalar(g->shape().dtype(), 0), std::move(uncrop)) : g;
  return b.Slice(full, std::move(slice));
}

std::vector<Instruction*> PadVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  Instruction* g = in.cotangent;
  Instruction* dx = PadVjpOperand(in.forward, in.operands[0], g, b);
  Instruction* dv = b.Subtract(SumOver(b, g, AllDims(g)), SumOver(b, dx, AllDims(dx)));
  return {dx, dv};
}

std::vector<Instruction*> DynamicSliceVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  Instruction* x = in.operands[0];
  std::vector<Instruction*> starts(in.operands.begin() + 1, in.operands.end());
  std::vector<Instruction*> cotangents(in.operands.size(), nullptr);
  cotangents[0] = b.DynamicUpdateSlice(Full(b, x, 0), in.cotangent, std::move(starts));
  return cotangents;
}

std::vector<Instruction*> DynamicUpdateSliceVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  Instruction* update = in.operands[1];
  std::vector<Instruction*> starts(in.operands.begin() + 2, in.operands.end());
  std::vector<Instruction*> cotangents(in.operands.size(), nullptr);
  cotangents[0] = b.DynamicUpdateSlice(in.cotangent, Full(b, update, 0), starts);
  cotangents[1] = b.DynamicSlice(in.cotangent, starts, update->shape().dims());
  return cotangents;
}

Result<std::vector<Instruction*>> ReduceExtremumVjp(const VjpInputs& in,
                                                    ir::ComputationBuilder& b) {
  const Instruction& forward = in.forward;
  if (forward.operand_count() != 2) {
    return Unimplemented("no gradient rule for a reduce of {} inputs with a {} reducer",
                         forward.operand_count() / 2,
                         ir::OpcodeName(forward.called_computations()[0]->root()->opcode()));
  }
  Instruction* x = in.operands[0];
  const std::vector<int64_t>& reduced = forward.attributes().dimensions;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!Contains(reduced, d)) kept.push_back(d);
  }
  const std::vector<int64_t>& dims = x->shape().dims();
  Instruction* eq = b.Compare(x, b.Broadcast(in.output, dims, kept), ir::ComparisonDirection::kEq);
  Instruction* mask = b.Select(eq, Full(b, x, 1), Full(b, x, 0));
  Instruction* count = SumOver(b, mask, reduced);
  count = b.Maximum(count, Full(b, count, 1));
  Instruction* share = b.Divide(in.cotangent, count);
  return std::vector<Instruction*>{b.Multiply(mask, b.Broadcast(share, dims, kept)), nullptr};
}

// The largest start XLA allows for each component k of an index vector, broadcast to the shape of
// `indices`: operand_dims[m] - sizes[m] with m = start_index_map[k].
Instruction* StartBounds(ir::ComputationBuilder& b, Instruction* indices, int64_t index_vector_dim,
                         const std::vector<int64_t>& start_index_map,
                         const std::vector<int64_t>& operand_dims,
                         const std::vector<int64_t>& sizes) {
  std::vector<int64_t> bounds;
  for (int64_t m : start_index_map) {
    bounds.push_back(operand_dims[static_cast<size_t>(m)] - sizes[static_cast<size_t>(m)]);
  }
  const ir::DType dtype = indices->shape().dtype();
  const std::vector<int64_t>& dims = indices->shape().dims();
  if (index_vector_dim == indices->shape().rank()) {
    // The implicit trailing index vector of size 1.
    return b.Broadcast(b.ConstantScalar(dtype, static_cast<double>(bounds.at(0))), dims, {});
  }
  const int64_t n = static_cast<int64_t>(bounds.size());
  Instruction* vector = b.Constant(ir::Literal::FromInts(ir::Shape::Array(dtype, {n}), bounds));
  return b.Broadcast(vector, dims, {index_vector_dim});
}

std::vector<Instruction*> GatherVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const ir::GatherDimensionNumbers& n = *in.forward.attributes().gather_dims;
  const std::vector<int64_t>& slice_sizes = in.forward.attributes().slice_sizes;
  Instruction* x = in.operands[0];
  Instruction* indices = in.operands[1];
  // Batching dims of the index vector are not starts; only start_index_map's are clamped.
  Instruction* bounds = StartBounds(b, indices, n.index_vector_dim, n.start_index_map,
                                    x->shape().dims(), slice_sizes);
  Instruction* clamped = b.Clamp(Full(b, indices, 0), indices, bounds);
  const ir::ScatterDimensionNumbers numbers{n.offset_dims,           n.collapsed_slice_dims,
                                            n.start_index_map,       n.index_vector_dim,
                                            n.operand_batching_dims, n.start_indices_batching_dims};
  const ir::DType dtype = x->shape().dtype();
  Instruction* dx = b.Scatter({Full(b, x, 0)}, clamped, {in.cotangent}, numbers,
                              b.module_builder().ScalarReducer(Opcode::kAdd, dtype));
  return {dx, nullptr};
}

Result<std::vector<Instruction*>> ScatterVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const Instruction& forward = in.forward;
  const Opcode combiner = forward.called_computations()[0]->root()->opcode();
  if (forward.operand_count() != 3) {
    return Unimplemented("no gradient rule for a scatter of {} operands (only one)",
                         (forward.operand_count() - 1) / 2);
  }
  if (combiner != Opcode::kAdd) {
    return Unimplemented("no gradient rule for scatter with a {} combiner (only add)",
                         ir::OpcodeName(combiner));
  }
  const ir::ScatterDimensionNumbers& n = *forward.attributes().scatter_dims;
  Instruction* operand = in.operands[0];
  Instruction* indices = in.operands[1];
  Instruction* updates = in.operands[2];
  Instruction* g = in.cotangent;
  const int64_t rank = operand->shape().rank();
  // Window sizes per operand dim: 1 for inserted and batching dims, else the update window dims'
  // sizes in order.
  std::vector<int64_t> sizes;
  size_t window = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (Contains(n.inserted_window_dims, d) || Contains(n.input_batching_dims, d)) {
      sizes.push_back(1);
    } else {
      sizes.push_back(updates->shape().dim(n.update_window_dims.at(window++)));
    }
  }
  const ir::GatherDimensionNumbers numbers{
      n.update_window_dims, n.inserted_window_dims, n.scatter_dims_to_operand_dims,
      n.index_vector_dim,   n.input_batching_dims,  n.scatter_indices_batching_dims};
  Instruction* gathered = b.Gather(g, indices, numbers, sizes);
  // A window is applied iff 0 <= start_k <= bound_k for every component k (scatter.cc).
  Instruction* bounds = StartBounds(b, indices, n.index_vector_dim, n.scatter_dims_to_operand_dims,
                                    operand->shape().dims(), sizes);
  Instruction* in_bounds =
      b.Binary(Opcode::kAnd, b.Compare(indices, Full(b, indices, 0), ir::ComparisonDirection::kGe),
               b.Compare(indices, bounds, ir::ComparisonDirection::kLe));
  if (n.index_vector_dim < indices->shape().rank()) {
    in_bounds = b.Reduce(in_bounds, b.ConstantScalar(ir::DType::kPred, 1), {n.index_vector_dim},
                         b.module_builder().ScalarReducer(Opcode::kAnd, ir::DType::kPred));
  }
  // in_bounds has the update scatter dims (those not in update_window_dims), in order.
  std::vector<int64_t> scatter_dims;
  for (int64_t d = 0; d < updates->shape().rank(); ++d) {
    if (!Contains(n.update_window_dims, d)) scatter_dims.push_back(d);
  }
  Instruction* mask = b.Broadcast(in_bounds, updates->shape().dims(), scatter_dims);
  Instruction* dupdates = b.Select(mask, gathered, Full(b, updates, 0));
  return std::vector<Instruction*>{g, nullptr, dupdates};
}

}  // namespace

Result<std::vector<Instruction*>> IndexingVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  switch (in.forward.opcode()) {
    case Opcode::kPad:
      return PadVjp(in, b);
    case Opcode::kReverse:
      return std::vector<Instruction*>{b.Reverse(in.cotangent, in.forward.attributes().dimensions)};
    case Opcode::kDynamicSlice:
      return DynamicSliceVjp(in, b);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSliceVjp(in, b);
    case Opcode::kReduce: {
      const Opcode reducer = in.forward.called_computations()[0]->root()->opcode();
      if (reducer == Opcode::kMaximum || reducer == Opcode::kMinimum) {
        return ReduceExtremumVjp(in, b);
      }
      return Unimplemented("no gradient rule for reduce with a {} reducer here",
                           ir::OpcodeName(reducer));
    }
    case Opcode::kGather:
      return GatherVjp(in, b);
    case Opcode::kScatter:
      return ScatterVjp(in, b);
    default:
      return Unimplemented("no gradient rule for {}", ir::OpcodeName(in.forward.opcode()));
  }
}

}  // namespace alpa::autodiff
