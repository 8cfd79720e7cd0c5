#include "models/expert_routing.h"

#include <algorithm>
#include <utility>

namespace alpa::models {

using ir::ComparisonDirection;
using ir::Instruction;
using ir::Opcode;

RoutingShape RoutingShape::Top2(int64_t tokens, int64_t group_size, int64_t experts) {
  const int64_t group = std::min(group_size, tokens);
  return {.groups = tokens / group,
          .group = group,
          .experts = experts,
          .capacity = (2 * group + experts - 1) / experts};
}

Instruction* Top2Router::Full(ir::DType dtype, double value, std::vector<int64_t> dims) {
  return b_.Broadcast(b_.ConstantScalar(dtype, value), std::move(dims), {});
}

Instruction* Top2Router::ArgMaxMask(Instruction* scores) {
  const std::vector<int64_t> dims = {s_.groups, s_.group, s_.experts};
  Instruction* iota = b_.Iota(ir::Shape::Array(ir::DType::kS32, dims), 2);
  Instruction* is_max =
      b_.Compare(scores, emit_.ReduceLast(scores, Opcode::kMaximum), ComparisonDirection::kEq);
  // first[g, s] = min{e : scores[g, s, e] is the maximum}
  Instruction* candidates = b_.Select(is_max, iota, Full(ir::DType::kS32, s_.experts, dims));
  Instruction* first =
      b_.Reduce(candidates, b_.ConstantScalar(ir::DType::kS32, s_.experts), {2},
                b_.module_builder().ScalarReducer(Opcode::kMinimum, ir::DType::kS32));
  return b_.Compare(iota, b_.Broadcast(first, dims, {0, 1}), ComparisonDirection::kEq);
}

Instruction* Top2Router::ExclusiveCumsum(Instruction* mask) {
  // lower[s, s'] = 1 where s' < s;  pos = einsum("st,gte->gse", lower, mask)
  const ir::Shape square = ir::Shape::Array(ir::DType::kS32, {s_.group, s_.group});
  Instruction* lower = b_.Convert(
      b_.Compare(b_.Iota(square, 1), b_.Iota(square, 0), ComparisonDirection::kLt), gating_);
  Instruction* sums = b_.Dot(lower, b_.Convert(mask, gating_), {{}, {}, {1}, {1}});
  return b_.Transpose(sums, {1, 0, 2});
}

Instruction* Top2Router::Slots(Instruction* mask, Instruction* pos) {
  const std::vector<int64_t> dims = {s_.groups, s_.group, s_.experts, s_.capacity};
  Instruction* slot = b_.Iota(ir::Shape::Array(gating_, dims), 3);
  Instruction* at_pos =
      b_.Compare(b_.Broadcast(pos, dims, {0, 1, 2}), slot, ComparisonDirection::kEq);
  return b_.Binary(Opcode::kAnd, b_.Broadcast(mask, dims, {0, 1, 2}), at_pos);
}

Routing Top2Router::Route(Instruction* gate, Instruction* tokens) {
  const std::vector<int64_t> dims = {s_.groups, s_.group, s_.experts};
  // probs = softmax_e(einsum("gsh,he->gse", x, gate))
  Instruction* logits = b_.Convert(b_.MatMul(tokens, gate), gating_);
  Instruction* exp = b_.Exp(b_.Subtract(logits, emit_.ReduceLast(logits, Opcode::kMaximum)));
  Instruction* probs = b_.Divide(exp, emit_.ReduceLast(exp, Opcode::kAdd));
  // Top-2: the first choice, then the best of the others (probs >= 0 > -1).
  Instruction* first = ArgMaxMask(probs);
  Instruction* second = ArgMaxMask(b_.Select(first, Full(gating_, -1, dims), probs));
  // Slots: first choices in token order, then second choices behind all first choices.
  Instruction* first_count = b_.Sum(b_.Convert(first, gating_), {1});
  Instruction* pos_1 = ExclusiveCumsum(first);
  Instruction* pos_2 = b_.Add(ExclusiveCumsum(second), b_.Broadcast(first_count, dims, {0, 2}));
  Instruction* slots = b_.Binary(Opcode::kOr, Slots(first, pos_1), Slots(second, pos_2));
  // Combine weights: the chosen experts' probabilities normalised over the two.
  Instruction* zeros = Full(gating_, 0, dims);
  Instruction* chosen = b_.Add(emit_.ReduceLast(b_.Select(first, probs, zeros), Opcode::kAdd),
                               emit_.ReduceLast(b_.Select(second, probs, zeros), Opcode::kAdd));
  const std::vector<int64_t> slot_dims = {s_.groups, s_.group, s_.experts, s_.capacity};
  Instruction* combine =
      b_.Select(slots, b_.Broadcast(b_.Divide(probs, chosen), slot_dims, {0, 1, 2}),
                Full(gating_, 0, slot_dims));
  Instruction* dispatch =
      b_.Compare(combine, Full(gating_, 0, slot_dims), ComparisonDirection::kGt);
  return {b_.Convert(combine, activations_), b_.Convert(dispatch, activations_)};
}

Instruction* Top2Router::Dispatch(const Routing& routing, Instruction* tokens) {
  // in = einsum("gsec,gsh->egch", dispatch, x)
  return b_.Transpose(b_.Dot(routing.dispatch, tokens, {{0}, {0}, {1}, {1}}), {1, 0, 2, 3});
}

Instruction* Top2Router::Combine(const Routing& routing, Instruction* expert_outputs) {
  // y = einsum("gsec,egch->gsh", combine, out)
  return b_.Dot(routing.combine, expert_outputs, {{0}, {1}, {2, 3}, {0, 2}});
}

}  // namespace alpa::models
