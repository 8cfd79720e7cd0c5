#include "sharding/reduce_strategies.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/computation.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

// Whether `reducer` of `n` accumulators sums: its root (or root tuple element i) is
// add(parameter i, parameter n + i) in either order.
bool IsAddReducer(const ir::Instruction& instruction, int64_t n) {
  if (instruction.called_computations().empty()) return false;
  const ir::Computation& reducer = *instruction.to_apply();
  const std::vector<ir::Instruction*> parameters = reducer.parameters();
  if (static_cast<int64_t>(parameters.size()) != 2 * n) return false;
  const ir::Instruction* root = reducer.root();
  auto is_sum = [&](const ir::Instruction* value, int64_t i) {
    if (value == nullptr || value->opcode() != ir::Opcode::kAdd) return false;
    const ir::Instruction* a = parameters[static_cast<size_t>(i)];
    const ir::Instruction* b = parameters[static_cast<size_t>(n + i)];
    return (value->operand(0) == a && value->operand(1) == b) ||
           (value->operand(0) == b && value->operand(1) == a);
  };
  if (n == 1) return is_sum(root, 0);
  if (root == nullptr || root->opcode() != ir::Opcode::kTuple || root->operand_count() != n) {
    return false;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!is_sum(root->operand(i), i)) return false;
  }
  return true;
}

Status NotHandled(const ir::Instruction& instruction, std::string_view family) {
  return Unimplemented("{} strategies: %{} ({}) has not the operands and attributes of a {}",
                       family, instruction.name(), ir::OpcodeName(instruction.opcode()), family);
}

// The spec operand 0 is in under strategy `s` of its set.
ShardingSpec DataSpec(const ir::Instruction& instruction, const Strategy& s) {
  ALPA_CHECK(s.output.size() == 1, "%{}: the data operand of %{} is not an array",
             instruction.operand(0)->name(), instruction.name());
  return s.output[0];
}

// Strategy fields every member of the family sets alike: `count` inputs in `in` and outputs in
// `out`, the remaining operands replicated; compute divided by the axes splitting `in`. Named
// "<the operand's spec GIVEN> -> <out>".
Strategy Follow(const ir::Instruction& instruction, const StrategyContext& ctx, double full_seconds,
                int64_t count, const ShardingSpec& given, const ShardingSpec& in,
                const ShardingSpec& out) {
  Strategy strategy;
  strategy.name = ToString(given) + " -> " + ToString(out);
  strategy.output.assign(static_cast<size_t>(ShapeLeaves(instruction.shape()).size()), out);
  for (int64_t o = 0; o < instruction.operand_count(); ++o) {
    strategy.operands.push_back(o < count ? LeafSpecs{in}
                                          : ReplicatedLeaves(instruction.operand(o)->shape()));
  }
  strategy.compute_seconds =
      full_seconds / static_cast<double>(SplitAxesSize(in, ctx.mesh_shape()));
  strategy.memory_bytes = LeafBytes(strategy.output, instruction.shape(), ctx.mesh_shape());
  return strategy;
}

// Size 1, stride 1, no padding, no dilation.
bool IsPointwise(const ir::WindowDim& window) {
  return window.size == 1 && window.stride == 1 && window.pad_low == 0 && window.pad_high == 0 &&
         window.lhs_dilation == 1 && window.rhs_dilation == 1;
}

// The windowed ops: IN with its non-pointwise dimensions replicated (and its partial axes
// dropped unless `keep_partial`), for inputs 0..count-1 and every output.
Result<StrategySet> WindowedStrategies(const ir::Instruction& instruction,
                                       const StrategyContext& ctx, int64_t count,
                                       bool keep_partial) {
  ALPA_ASSIGN_OR_RETURN(const double full_seconds, InstructionSeconds(instruction, ctx));
  const std::vector<ir::WindowDim>& window = instruction.attributes().window;
  StrategySet set;
  set.follows_operand = 0;
  for (const Strategy& s : ctx.strategies_of(*instruction.operand(0)).strategies) {
    const ShardingSpec given = DataSpec(instruction, s);
    ShardingSpec in = given;
    if (!keep_partial) in.partial_axes.clear();
    for (size_t d = 0; d < in.dim_axes.size(); ++d) {
      if (!IsPointwise(window[d])) in.dim_axes[d].clear();
    }
    set.strategies.push_back(Follow(instruction, ctx, full_seconds, count, given, in, in));
  }
  return set;
}

}  // namespace

Result<StrategySet> ReduceStrategies(const ir::Instruction& instruction,
                                     const StrategyContext& ctx) {
  const int64_t n = instruction.operand_count() / 2;
  if (instruction.opcode() != ir::Opcode::kReduce || n < 1 ||
      instruction.operand_count() != 2 * n ||
      static_cast<int64_t>(ShapeLeaves(instruction.shape()).size()) != n) {
    return NotHandled(instruction, "reduce");
  }
  ALPA_ASSIGN_OR_RETURN(const double full_seconds, InstructionSeconds(instruction, ctx));
  const std::vector<int64_t>& reduced = instruction.attributes().dimensions;
  const bool partial = ctx.options.allow_partial_outputs && IsAddReducer(instruction, n);
  // With several users, a cut sum may also be reduced once in the op (see the header).
  const bool both_ways = partial && HasSeveralUsers(instruction, ctx);

  StrategySet set;
  set.follows_operand = 0;
  for (const Strategy& s : ctx.strategies_of(*instruction.operand(0)).strategies) {
    const ShardingSpec given = DataSpec(instruction, s);
    ShardingSpec in = given;
    if (!partial) in.partial_axes.clear();
    // OUT: the kept dimensions in order; the reduced dimensions' axes cut the sum.
    ShardingSpec out;
    std::vector<int64_t> cut;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const std::vector<int64_t>& axes = in.dim_axes[static_cast<size_t>(d)];
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
        out.dim_axes.push_back(axes);
      } else {
        cut.insert(cut.end(), axes.begin(), axes.end());
      }
    }
    std::sort(cut.begin(), cut.end());
    out.partial_axes = in.partial_axes;
    if (!cut.empty() && partial) {
      ShardingSpec partial_out = out;
      partial_out.partial_axes.insert(partial_out.partial_axes.end(), cut.begin(), cut.end());
      std::sort(partial_out.partial_axes.begin(), partial_out.partial_axes.end());
      Strategy strategy = Follow(instruction, ctx, full_seconds, n, given, in, partial_out);
      strategy.name += " (partial @ " + AxesString(cut) + ")";
      set.strategies.push_back(std::move(strategy));
      if (!both_ways) continue;
      // Both ways stay open (and the set no longer follows): a partial sum read by several users
      // is all-reduced on each of their edges, where the reduce's own all-reduce is paid once.
      set.follows_operand = -1;
    }
    Strategy strategy = Follow(instruction, ctx, full_seconds, n, given, in, out);
    if (!cut.empty() && both_ways && n == 1) {
      for (Strategy& variant : ReduceScatterVariants(strategy, instruction, cut, ctx)) {
        set.strategies.push_back(std::move(variant));
      }
    }
    if (!cut.empty()) {
      // AR(sum over outputs of TileBytes(OUT), cut axes)
      strategy.name += " (allreduce @ " + AxesString(cut) + ")";
      AddCollective(strategy, ctx, cost::CollectiveKind::kAllReduce, cut, strategy.memory_bytes);
    }
    set.strategies.push_back(std::move(strategy));
  }
  return set;
}

Result<StrategySet> ReduceWindowStrategies(const ir::Instruction& instruction,
                                           const StrategyContext& ctx) {
  const int64_t n = instruction.operand_count() / 2;
  if (instruction.opcode() != ir::Opcode::kReduceWindow || n < 1 ||
      instruction.operand_count() != 2 * n ||
      static_cast<int64_t>(instruction.attributes().window.size()) !=
          instruction.operand(0)->shape().rank()) {
    return NotHandled(instruction, "reduce-window");
  }
  const bool partial = ctx.options.allow_partial_outputs && IsAddReducer(instruction, n);
  return WindowedStrategies(instruction, ctx, n, partial);
}

Result<StrategySet> SelectAndScatterStrategies(const ir::Instruction& instruction,
                                               const StrategyContext& ctx) {
  if (instruction.opcode() != ir::Opcode::kSelectAndScatter || instruction.operand_count() != 3 ||
      static_cast<int64_t>(instruction.attributes().window.size()) !=
          instruction.operand(0)->shape().rank()) {
    return NotHandled(instruction, "select-and-scatter");
  }
  // Operand and source (count 2) in IN, the init value replicated.
  return WindowedStrategies(instruction, ctx, 2, /*keep_partial=*/false);
}

}  // namespace alpa::sharding
