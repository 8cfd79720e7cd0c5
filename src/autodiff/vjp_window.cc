// Rules of reduce-window with one input x and init v (pooling). Per dim: input size n, window
// size k, stride s, padding (lo, hi), window dilation r, output size m; cotangent g of y.
//
//   add (sum pooling; average pooling is this followed by a divide):
//     y[j] = v + sum_t x[j s - lo + t r], so dx[i] = sum of g[j] over the windows holding i.
//     That is a reduce-window add over g dilated by s (JAX's _reduce_window_sum_transpose_rule):
//       dx = reduce-window(pad(g, 0, low = k_d - 1 - lo, high = n + k_d - 1 - m_d - low,
//                              interior = s - 1), add, size k, stride 1, dilation r, no padding)
//     with k_d = (k - 1) r + 1 and m_d = (m - 1) s + 1 (the padding that recovers all of x, the
//     same as for convolution's input gradient; high is negative when hi cropped x). The window
//     is symmetric (all ones), so unlike convolution nothing is reversed.
//     dv = sum of g (v is added once per output element).
//   max (max pooling):
//     each output's g goes to the window element that won: dx = select-and-scatter(x, g', 0)
//     with select = GE (the first maximum wins, as reduce-window max keeps it) and scatter = add,
//     the same window; padding elements are never selected. Where the init won (y == v, e.g. a
//     window entirely in the padding, or every element below a finite v) g goes to v instead:
//     g' = select(y == v, 0, g), dv = sum of select(y == v, g, 0). When v is the constant -inf
//     (or the lowest value) no real element loses to it, so the mask is skipped and dv = 0.
// Not supported (Unimplemented): other reducers, several inputs, base dilation != 1, and window
// dilation != 1 for max (select-and-scatter has none in XLA).
#include <cmath>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;
using ir::Opcode;

namespace {

std::vector<int64_t> AllDims(int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) dims[static_cast<size_t>(d)] = d;
  return dims;
}

Instruction* SumPoolVjp(const std::vector<ir::WindowDim>& window, Instruction* x, Instruction* g,
                        ir::ComputationBuilder& b) {
  const ir::DType dtype = g->shape().dtype();
  std::vector<ir::PaddingDim> padding;
  std::vector<ir::WindowDim> unit_stride;
  for (size_t d = 0; d < window.size(); ++d) {
    const ir::WindowDim& w = window[d];
    const int64_t n = x->shape().dim(static_cast<int64_t>(d));
    const int64_t m = g->shape().dim(static_cast<int64_t>(d));
    const int64_t k_dilated = (w.size - 1) * w.rhs_dilation + 1;
    const int64_t m_dilated = (m - 1) * w.stride + 1;
    const int64_t low = k_dilated - 1 - w.pad_low;
    padding.push_back({low, n + k_dilated - 1 - m_dilated - low, w.stride - 1});
    ir::WindowDim u;
    u.size = w.size;
    u.rhs_dilation = w.rhs_dilation;
    unit_stride.push_back(u);
  }
  Instruction* zero = b.ConstantScalar(dtype, 0);
  return b.ReduceWindow({b.Pad(g, zero, std::move(padding))}, {zero}, std::move(unit_stride),
                        b.module_builder().ScalarReducer(Opcode::kAdd, dtype));
}

// True when `init` is a constant no element of its type can lose to under max.
bool IsLowestConstant(const Instruction* init) {
  if (init->opcode() != Opcode::kConstant || !init->attributes().literal.has_value() ||
      init->attributes().literal->element_count() != 1) {
    return false;
  }
  const double value = init->attributes().literal->GetDouble(0);
  return std::isinf(value) && value < 0;
}

// select(a, b) = a >= b, a (T, T) -> pred[] computation in the gradient's module.
Result<ir::Computation*> GeSelector(ir::ComputationBuilder& b, ir::DType dtype) {
  ir::ModuleBuilder& mb = b.module_builder();
  ir::ComputationBuilder select = mb.NewComputation(mb.UniqueName("ge"));
  Instruction* lhs = select.Parameter(0, ir::Shape::Scalar(dtype));
  Instruction* rhs = select.Parameter(1, ir::Shape::Scalar(dtype));
  return select.Build(select.Compare(lhs, rhs, ir::ComparisonDirection::kGe));
}

Result<std::vector<Instruction*>> MaxPoolVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const std::vector<ir::WindowDim>& window = in.forward.attributes().window;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d].rhs_dilation != 1) {
      return Unimplemented(
          "gradient of max reduce-window %{}: window dilation {} in dim {}; only 1 is supported",
          in.forward.name(), window[d].rhs_dilation, d);
    }
  }
  Instruction* x = in.operands[0];
  Instruction* init = in.operands[1];
  Instruction* g = in.cotangent;
  const ir::DType dtype = g->shape().dtype();
  Instruction* zero = b.ConstantScalar(dtype, 0);
  Instruction* d_init = zero;
  if (!IsLowestConstant(in.forward.operand(1))) {
    Instruction* init_won = b.Compare(in.output, b.Broadcast(init, g->shape().dims(), {}),
                                      ir::ComparisonDirection::kEq);
    Instruction* zeros = Full(b, g, 0);
    d_init = SumOver(b, b.Select(init_won, g, zeros), AllDims(g->shape().rank()));
    g = b.Select(init_won, zeros, g);
  }
  ALPA_ASSIGN_OR_RETURN(ir::Computation * select, GeSelector(b, dtype));
  ir::Attributes attributes;
  attributes.window = window;
  Instruction* d_x =
      b.AddInstruction(Opcode::kSelectAndScatter, {x, g, zero}, attributes,
                       {select, b.module_builder().ScalarReducer(Opcode::kAdd, dtype)});
  return std::vector<Instruction*>{d_x, d_init};
}

}  // namespace

Result<std::vector<Instruction*>> WindowVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  if (in.forward.opcode() != Opcode::kReduceWindow) {
    return Unimplemented("no reduce-window gradient rule for {}",
                         ir::OpcodeName(in.forward.opcode()));
  }
  if (in.operands.size() != 2) {
    return Unimplemented("gradient of reduce-window %{} with {} inputs: only one is supported",
                         in.forward.name(), in.operands.size() / 2);
  }
  const std::vector<ir::WindowDim>& window = in.forward.attributes().window;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d].lhs_dilation != 1) {
      return Unimplemented(
          "gradient of reduce-window %{}: base dilation {} in dim {}; only 1 is supported",
          in.forward.name(), window[d].lhs_dilation, d);
    }
  }
  Instruction* x = in.operands[0];
  Instruction* g = in.cotangent;
  if (g->shape().ElementCount() == 0) {
    // No window: nothing reaches x or the init.
    return std::vector<Instruction*>{Full(b, x, 0), Full(b, in.operands[1], 0)};
  }
  const Opcode reducer = in.forward.called_computations()[0]->root()->opcode();
  switch (reducer) {
    case Opcode::kAdd:
      return std::vector<Instruction*>{SumPoolVjp(window, x, g, b),
                                       SumOver(b, g, AllDims(g->shape().rank()))};
    case Opcode::kMaximum:
      return MaxPoolVjp(in, b);
    default:
      return Unimplemented(
          "gradient of reduce-window %{} with a {} reducer: only add and maximum are supported",
          in.forward.name(), ir::OpcodeName(reducer));
  }
}

}  // namespace alpa::autodiff
