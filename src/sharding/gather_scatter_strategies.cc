#include "sharding/gather_scatter_strategies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/computation.h"
#include "sharding/follow_util.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

using ir::Opcode;

// A tensor of the instruction: an operand index, or kResult (every result leaf).
constexpr int64_t kResult = -1;

struct DimRef {
  int64_t tensor;
  int64_t dim;
};

// One role (see the header): the dims its axes split, and the tensors it leaves partial over them.
struct Role {
  int64_t size = 0;  // the extent of every dim it splits
  std::vector<DimRef> splits;
  std::vector<int64_t> partial;
};

std::optional<size_t> IndexOf(const std::vector<int64_t>& list, int64_t value) {
  auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) return std::nullopt;
  return static_cast<size_t>(it - list.begin());
}

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return IndexOf(list, value).has_value();
}

// The indices' dims other than index_vector_dim (which may be the implicit one past the end).
std::vector<int64_t> IndexBatchDims(const ir::Shape& indices, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t j = 0; j < indices.rank(); ++j) {
    if (j != index_vector_dim) dims.push_back(j);
  }
  return dims;
}

std::vector<Role> GatherRoles(const ir::Instruction& gather) {
  const ir::GatherDimensionNumbers& dn = *gather.attributes().gather_dims;
  const std::vector<int64_t>& slice_sizes = gather.attributes().slice_sizes;
  const ir::Shape& operand = gather.operand(0)->shape();
  const ir::Shape& indices = gather.operand(1)->shape();
  std::vector<Role> roles;
  // The result's non-offset dims are the index batch dims, in order.
  std::vector<int64_t> result_batch_dims;
  for (int64_t i = 0; i < gather.shape().rank(); ++i) {
    if (!Contains(dn.offset_dims, i)) result_batch_dims.push_back(i);
  }
  const std::vector<int64_t> batch_dims = IndexBatchDims(indices, dn.index_vector_dim);
  for (size_t m = 0; m < batch_dims.size(); ++m) {
    Role role{
        indices.dim(batch_dims[m]), {{1, batch_dims[m]}, {kResult, result_batch_dims[m]}}, {}};
    if (auto t = IndexOf(dn.start_indices_batching_dims, batch_dims[m])) {
      role.splits.push_back({0, dn.operand_batching_dims[*t]});
    }
    roles.push_back(std::move(role));
  }
  size_t next_offset = 0;  // the result's offset dims take the window dims in order
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const int64_t slice = slice_sizes[static_cast<size_t>(d)];
    const bool window =
        !Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d);
    const int64_t result_dim = window ? dn.offset_dims[next_offset++] : -1;
    if (window && slice == operand.dim(d)) {
      roles.push_back({operand.dim(d), {{0, d}, {kResult, result_dim}}, {}});
    } else if (slice == 1 && Contains(dn.start_index_map, d)) {
      roles.push_back({operand.dim(d), {{0, d}}, {kResult}});
    }
  }
  return roles;
}

// A scalar computation (a, b) -> a + b.
bool IsAddReducer(const ir::Computation& reducer) {
  const ir::Instruction* root = reducer.root();
  if (root == nullptr || root->opcode() != Opcode::kAdd) return false;
  const ir::Instruction* a = root->operand(0);
  const ir::Instruction* b = root->operand(1);
  return a->opcode() == Opcode::kParameter && b->opcode() == Opcode::kParameter &&
         a->attributes().parameter_number != b->attributes().parameter_number;
}

std::vector<Role> ScatterRoles(const ir::Instruction& scatter) {
  const ir::ScatterDimensionNumbers& dn = *scatter.attributes().scatter_dims;
  const int64_t n = scatter.operand_count() / 2;  // inputs; then the indices, then n updates
  const ir::Shape& operand = scatter.operand(0)->shape();
  const ir::Shape& indices = scatter.operand(n)->shape();
  const ir::Shape& update = scatter.operand(n + 1)->shape();
  auto every = [n](std::vector<DimRef>& splits, int64_t first, int64_t dim) {
    for (int64_t k = 0; k < n; ++k) splits.push_back({first + k, dim});
  };
  std::vector<Role> roles;
  // The updates' scatter dims are the index batch dims, in order.
  std::vector<int64_t> update_scatter_dims;
  for (int64_t i = 0; i < update.rank(); ++i) {
    if (!Contains(dn.update_window_dims, i)) update_scatter_dims.push_back(i);
  }
  const std::vector<int64_t> batch_dims = IndexBatchDims(indices, dn.index_vector_dim);
  const bool add = n == 1 && IsAddReducer(*scatter.to_apply());
  for (size_t m = 0; m < batch_dims.size(); ++m) {
    Role role{indices.dim(batch_dims[m]), {{n, batch_dims[m]}}, {}};
    every(role.splits, n + 1, update_scatter_dims[m]);
    if (auto t = IndexOf(dn.scatter_indices_batching_dims, batch_dims[m])) {
      every(role.splits, 0, dn.input_batching_dims[*t]);
      role.splits.push_back({kResult, dn.input_batching_dims[*t]});
    } else if (add) {
      role.partial = {0, kResult};
    } else {
      continue;
    }
    roles.push_back(std::move(role));
  }
  size_t next_window = 0;  // the updates' window dims cover the operand's window dims in order
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const bool window =
        !Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d);
    const int64_t update_dim = window ? dn.update_window_dims[next_window++] : -1;
    const int64_t extent = window ? update.dim(update_dim) : 1;
    const bool indexed = Contains(dn.scatter_dims_to_operand_dims, d);
    if (window && !indexed && extent == operand.dim(d)) {
      Role role{operand.dim(d), {{kResult, d}}, {}};
      every(role.splits, 0, d);
      every(role.splits, n + 1, update_dim);
      roles.push_back(std::move(role));
    } else if (indexed && extent == 1) {
      Role role{operand.dim(d), {{kResult, d}}, {}};
      every(role.splits, 0, d);
      roles.push_back(std::move(role));
    }
  }
  return roles;
}

std::string JoinSpecs(const std::vector<LeafSpecs>& operands) {
  std::string out;
  for (size_t k = 0; k < operands.size(); ++k) {
    out += (k > 0 ? " x " : "") + ToString(operands[k].front());
  }
  return out;
}

// One strategy per assignment of mesh axes to roles, the replicated one last.
Result<StrategySet> RoleStrategies(const ir::Instruction& instruction, const StrategyContext& ctx,
                                   const std::vector<Role>& roles) {
  ALPA_ASSIGN_OR_RETURN(const double seconds, InstructionSeconds(instruction, ctx));
  const std::vector<int64_t>& mesh_shape = ctx.mesh_shape();
  std::vector<int64_t> sizes;
  for (const Role& role : roles) sizes.push_back(role.size);
  std::vector<DimAxes> assignments = EnumerateDimSplits(sizes, mesh_shape);
  assignments.emplace_back(roles.size());
  const std::vector<const ir::Shape*> leaves = ShapeLeaves(instruction.shape());
  StrategySet set;
  for (const DimAxes& assignment : assignments) {
    std::vector<ShardingSpec> operands;
    for (const ir::Instruction* operand : instruction.operands()) {
      operands.push_back(ShardingSpec::Replicated(operand->shape().rank()));
    }
    ShardingSpec result = ShardingSpec::Replicated(leaves.front()->rank());
    auto spec_of = [&](int64_t tensor) -> ShardingSpec& {
      return tensor == kResult ? result : operands[static_cast<size_t>(tensor)];
    };
    for (size_t r = 0; r < roles.size(); ++r) {
      const std::vector<int64_t>& axes = assignment[r];
      if (axes.empty()) continue;
      for (const DimRef& ref : roles[r].splits) {
        std::vector<int64_t>& dim = spec_of(ref.tensor).dim_axes[static_cast<size_t>(ref.dim)];
        dim.insert(dim.end(), axes.begin(), axes.end());
      }
      for (int64_t tensor : roles[r].partial) {
        std::vector<int64_t>& partial = spec_of(tensor).partial_axes;
        partial.insert(partial.end(), axes.begin(), axes.end());
      }
    }
    for (ShardingSpec& spec : operands)
      std::sort(spec.partial_axes.begin(), spec.partial_axes.end());
    std::sort(result.partial_axes.begin(), result.partial_axes.end());
    Strategy strategy;
    for (ShardingSpec& spec : operands) strategy.operands.push_back({std::move(spec)});
    std::vector<int64_t> reduced;  // partial axes the strategy all-reduces itself
    if (!ctx.options.allow_partial_outputs) std::swap(reduced, result.partial_axes);
    strategy.name = fmt::format("{} = {}", ToString(result), JoinSpecs(strategy.operands));
    if (!reduced.empty()) strategy.name += fmt::format(" (allreduce @ {})", AxesString(reduced));
    strategy.output.assign(leaves.size(), result);
    SetDataMovementCosts(strategy, instruction, seconds, mesh_shape);
    AddCollective(strategy, ctx, cost::CollectiveKind::kAllReduce, std::move(reduced),
                  LeafBytes(strategy.output, instruction.shape(), mesh_shape));
    CheckStrategySpecs(strategy, instruction, mesh_shape);
    set.strategies.push_back(std::move(strategy));
  }
  return set;
}

}  // namespace

Result<StrategySet> GatherScatterStrategies(const ir::Instruction& instruction,
                                            const StrategyContext& ctx) {
  const bool gather = instruction.opcode() == Opcode::kGather;
  ALPA_CHECK(gather || instruction.opcode() == Opcode::kScatter,
             "GatherScatterStrategies called for %{}", instruction.name());
  return RoleStrategies(instruction, ctx,
                        gather ? GatherRoles(instruction) : ScatterRoles(instruction));
}

}  // namespace alpa::sharding
