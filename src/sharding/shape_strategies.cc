#include "sharding/shape_strategies.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "sharding/follow_util.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

using ir::Opcode;

// Operand and result dims (indices, size > 1 only) of one reshape group: equal products.
struct ReshapeGroup {
  std::vector<int64_t> in;
  std::vector<int64_t> out;
};

std::vector<int64_t> NonUnitDims(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

// The smallest runs of dims with equal products, walking both shapes major first. A tensor with a
// zero-size dim has no groups (nothing to split).
std::vector<ReshapeGroup> ReshapeGroups(const std::vector<int64_t>& in_dims,
                                        const std::vector<int64_t>& out_dims) {
  for (const auto* dims : {&in_dims, &out_dims}) {
    for (int64_t n : *dims) {
      if (n == 0) return {};
    }
  }
  const std::vector<int64_t> in = NonUnitDims(in_dims);
  const std::vector<int64_t> out = NonUnitDims(out_dims);
  std::vector<ReshapeGroup> groups;
  size_t i = 0;
  size_t j = 0;
  while (i < in.size()) {
    ALPA_CHECK(j < out.size(), "reshape of {} elements to {}", fmt::join(in_dims, ","),
               fmt::join(out_dims, ","));
    ReshapeGroup group{{in[i]}, {out[j]}};
    int64_t in_product = in_dims[static_cast<size_t>(in[i++])];
    int64_t out_product = out_dims[static_cast<size_t>(out[j++])];
    while (in_product != out_product) {
      if (in_product < out_product) {
        ALPA_CHECK(i < in.size(), "reshape sizes do not match");
        group.in.push_back(in[i]);
        in_product *= in_dims[static_cast<size_t>(in[i++])];
      } else {
        ALPA_CHECK(j < out.size(), "reshape sizes do not match");
        group.out.push_back(out[j]);
        out_product *= out_dims[static_cast<size_t>(out[j++])];
      }
    }
    groups.push_back(std::move(group));
  }
  ALPA_CHECK(j == out.size(), "reshape sizes do not match");
  return groups;
}

// One axis of a group's flattened tiling and the operand dim it splits.
struct FlatAxis {
  int64_t dim;
  int64_t axis;
};

// Broadcast, following: operand dim i's axes go to result dim dimensions[i].
ShardingSpec BroadcastResultSpec(const ShardingSpec& operand, int64_t result_rank,
                                 const std::vector<int64_t>& dimensions) {
  ShardingSpec result = ShardingSpec::Replicated(result_rank);
  for (size_t i = 0; i < dimensions.size(); ++i) {
    result.dim_axes[static_cast<size_t>(dimensions[i])] = operand.dim_axes[i];
  }
  result.partial_axes = operand.partial_axes;
  return result;
}

// Broadcast of a small operand: every split of the result, then replicated; the operand is
// needed split like the result dims it maps to.
Result<StrategySet> SmallBroadcastStrategies(const ir::Instruction& instruction,
                                             const StrategyContext& ctx) {
  ALPA_ASSIGN_OR_RETURN(const double seconds, InstructionSeconds(instruction, ctx));
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  const int64_t rank = instruction.shape().rank();
  std::vector<DimAxes> splits = EnumerateDimSplits(instruction.shape().dims(), ctx.mesh_shape());
  splits.emplace_back(static_cast<size_t>(rank));  // replicated, last (Alpa's convention)
  StrategySet set;
  for (DimAxes& split : splits) {
    Strategy strategy;
    ShardingSpec result{std::move(split), {}};
    ShardingSpec operand = ShardingSpec::Replicated(static_cast<int64_t>(dimensions.size()));
    for (size_t i = 0; i < dimensions.size(); ++i) {
      operand.dim_axes[i] = result.dim_axes[static_cast<size_t>(dimensions[i])];
    }
    strategy.name = fmt::format("{} = broadcast {}", ToString(result), ToString(operand));
    strategy.output = {std::move(result)};
    strategy.operands = {{std::move(operand)}};
    SetDataMovementCosts(strategy, instruction, seconds, ctx.mesh_shape());
    CheckStrategySpecs(strategy, instruction, ctx.mesh_shape());
    set.strategies.push_back(std::move(strategy));
  }
  return set;
}

bool IsSmallBroadcastOperand(const ir::Instruction& broadcast, const StrategyContext& ctx) {
  const ir::Shape& operand = broadcast.operand(0)->shape();
  return operand.rank() == 0 ||
         operand.ElementCount() * ctx.mesh->size() <= broadcast.shape().ElementCount();
}

}  // namespace

std::pair<ShardingSpec, ShardingSpec> ReshapeSpecs(const ShardingSpec& spec,
                                                   const std::vector<int64_t>& operand_dims,
                                                   const std::vector<int64_t>& result_dims,
                                                   const std::vector<int64_t>& mesh_shape) {
  ShardingSpec needed = ShardingSpec::Replicated(static_cast<int64_t>(operand_dims.size()));
  ShardingSpec result = ShardingSpec::Replicated(static_cast<int64_t>(result_dims.size()));
  needed.partial_axes = result.partial_axes = spec.partial_axes;
  auto size_of = [&](int64_t axis) { return mesh_shape[static_cast<size_t>(axis)]; };
  for (const ReshapeGroup& group : ReshapeGroups(operand_dims, result_dims)) {
    // The operand walk: axes in order while they tile the flattened group contiguously.
    std::vector<FlatAxis> flat;
    for (int64_t d : group.in) {
      const int64_t n = operand_dims[static_cast<size_t>(d)];
      int64_t tiles = 1;
      for (int64_t axis : spec.dim_axes[static_cast<size_t>(d)]) {
        if (n % (tiles * size_of(axis)) != 0) break;
        tiles *= size_of(axis);
        flat.push_back({d, axis});
      }
      if (tiles != n) break;  // later dims' splits would be strided
    }
    // The result walk: place the axes in order; the first that does not fit ends the prefix.
    size_t placed = 0;
    for (int64_t e : group.out) {
      const int64_t n = result_dims[static_cast<size_t>(e)];
      int64_t tiles = 1;
      while (placed < flat.size() && n % (tiles * size_of(flat[placed].axis)) == 0) {
        tiles *= size_of(flat[placed].axis);
        result.dim_axes[static_cast<size_t>(e)].push_back(flat[placed++].axis);
      }
      if (tiles != n) break;
    }
    for (size_t k = 0; k < placed; ++k) {
      needed.dim_axes[static_cast<size_t>(flat[k].dim)].push_back(flat[k].axis);
    }
  }
  return {std::move(needed), std::move(result)};
}

bool IsShapeStrategyOpcode(ir::Opcode opcode) {
  switch (opcode) {
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

Result<StrategySet> ShapeStrategies(const ir::Instruction& instruction,
                                    const StrategyContext& ctx) {
  ALPA_CHECK(IsShapeStrategyOpcode(instruction.opcode()), "ShapeStrategies called for %{}",
             instruction.name());
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  const std::vector<int64_t>& operand_dims = instruction.operand(0)->shape().dims();
  const std::vector<int64_t>& result_dims = instruction.shape().dims();
  auto same = [](const ShardingSpec& needed, const ShardingSpec& result) {
    return FollowLayout{{{needed}}, {result}};
  };
  switch (instruction.opcode()) {
    case Opcode::kTranspose:
      return FollowOperand(instruction, ctx, 0, [&](const ShardingSpec& spec) {
        ShardingSpec result = spec;
        for (size_t i = 0; i < dimensions.size(); ++i) {
          result.dim_axes[i] = spec.dim_axes[static_cast<size_t>(dimensions[i])];
        }
        return same(spec, result);
      });
    case Opcode::kReverse:
      return FollowOperand(instruction, ctx, 0, [&](const ShardingSpec& spec) {
        const ShardingSpec needed = UnsplitDims(spec, dimensions);
        return same(needed, needed);
      });
    case Opcode::kBroadcast:
      if (IsSmallBroadcastOperand(instruction, ctx)) {
        return SmallBroadcastStrategies(instruction, ctx);
      }
      return FollowOperand(instruction, ctx, 0, [&](const ShardingSpec& spec) {
        return same(spec, BroadcastResultSpec(spec, instruction.shape().rank(), dimensions));
      });
    case Opcode::kReshape:
    case Opcode::kBitcast:
      if (operand_dims != result_dims) {
        return FollowOperand(instruction, ctx, 0, [&](const ShardingSpec& spec) {
          auto [needed, result] = ReshapeSpecs(spec, operand_dims, result_dims, ctx.mesh_shape());
          return same(needed, result);
        });
      }
      [[fallthrough]];
    default:  // copy, and a reshape or bitcast that keeps the dims
      return FollowOperand(instruction, ctx, 0,
                           [&](const ShardingSpec& spec) { return same(spec, spec); });
  }
}

}  // namespace alpa::sharding
