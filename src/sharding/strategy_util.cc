#include "sharding/strategy_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cost/compute_cost.h"
#include "sharding/resharding.h"

namespace alpa::sharding {
namespace {

// The enumeration's state: the dimension each non-trivial axis splits (-1: none) and the tile
// count of every dimension so far.
class SplitEnumerator {
 public:
  SplitEnumerator(const std::vector<int64_t>& dim_sizes, const std::vector<int64_t>& mesh_shape,
                  const DimSplitOptions& options)
      : sizes_(dim_sizes), mesh_shape_(mesh_shape), options_(options) {
    for (size_t a = 0; a < mesh_shape.size(); ++a) {
      if (mesh_shape[a] > 1) axes_.push_back(static_cast<int64_t>(a));
    }
    dim_of_axis_.assign(axes_.size(), -1);
    tiles_.assign(sizes_.size(), 1);
  }

  std::vector<DimAxes> Run() {
    Visit(0);
    return std::move(out_);
  }

 private:
  // Whether dimension `d` may be cut into `tiles` tiles.
  bool TilesFit(int64_t d, int64_t tiles) const {
    const int64_t n = sizes_[static_cast<size_t>(d)];
    return tiles <= n && n % tiles == 0;
  }

  // Whether splitting dimension `d` (unsplit so far) would break an exclusive group.
  bool ExclusiveClash(int64_t d) const {
    if (tiles_[static_cast<size_t>(d)] > 1) return false;
    for (const std::vector<int64_t>& group : options_.exclusive_groups) {
      if (std::find(group.begin(), group.end(), d) == group.end()) continue;
      for (int64_t other : group) {
        if (other != d && tiles_[static_cast<size_t>(other)] > 1) return true;
      }
    }
    return false;
  }

  bool CanAdd(size_t t, int64_t d) const {
    return TilesFit(d,
                    tiles_[static_cast<size_t>(d)] * mesh_shape_[static_cast<size_t>(axes_[t])]) &&
           !ExclusiveClash(d);
  }

  bool IsMaximal() const {
    for (size_t t = 0; t < axes_.size(); ++t) {
      if (dim_of_axis_[t] >= 0) continue;
      for (size_t d = 0; d < sizes_.size(); ++d) {
        if (CanAdd(t, static_cast<int64_t>(d))) return false;
      }
    }
    return true;
  }

  void Emit() {
    DimAxes split(sizes_.size());
    bool any = false;
    for (size_t t = 0; t < axes_.size(); ++t) {
      if (dim_of_axis_[t] < 0) continue;
      split[static_cast<size_t>(dim_of_axis_[t])].push_back(axes_[t]);  // ascending: t ascends
      any = true;
    }
    if (any && (!options_.maximal_only || IsMaximal())) out_.push_back(std::move(split));
  }

  // Axis t takes dimension 0, 1, ..., then none.
  void Visit(size_t t) {
    if (t == axes_.size()) {
      Emit();
      return;
    }
    for (size_t d = 0; d < sizes_.size(); ++d) {
      if (!CanAdd(t, static_cast<int64_t>(d))) continue;
      const int64_t before = tiles_[d];
      tiles_[d] *= mesh_shape_[static_cast<size_t>(axes_[t])];
      dim_of_axis_[t] = static_cast<int64_t>(d);
      Visit(t + 1);
      tiles_[d] = before;
    }
    dim_of_axis_[t] = -1;
    Visit(t + 1);
  }

  const std::vector<int64_t>& sizes_;
  const std::vector<int64_t>& mesh_shape_;
  const DimSplitOptions& options_;
  std::vector<int64_t> axes_;         // the mesh axes of size > 1, ascending
  std::vector<int64_t> dim_of_axis_;  // per entry of axes_
  std::vector<int64_t> tiles_;        // per dimension
  std::vector<DimAxes> out_;
};

void CollectLeaves(const ir::Shape& shape, std::vector<const ir::Shape*>& out) {
  if (!shape.IsTuple()) {
    out.push_back(&shape);
    return;
  }
  for (const ir::Shape& element : shape.tuple_shapes()) CollectLeaves(element, out);
}

std::string AxisDigits(const std::vector<int64_t>& axes) {
  std::string out;
  for (int64_t axis : axes) out += axis < 10 ? fmt::format("{}", axis) : fmt::format("({})", axis);
  return out;
}

}  // namespace

std::vector<DimAxes> EnumerateDimSplits(const std::vector<int64_t>& dim_sizes,
                                        const std::vector<int64_t>& mesh_shape,
                                        const DimSplitOptions& options) {
  for (const std::vector<int64_t>& group : options.exclusive_groups) {
    for (int64_t d : group) {
      ALPA_CHECK(d >= 0 && d < static_cast<int64_t>(dim_sizes.size()),
                 "exclusive group names dimension {} of {}", d, dim_sizes.size());
    }
  }
  return SplitEnumerator(dim_sizes, mesh_shape, options).Run();
}

int64_t AxesSize(const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& axes) {
  int64_t size = 1;
  for (int64_t axis : axes) size *= mesh_shape[static_cast<size_t>(axis)];
  return size;
}

int64_t SplitAxesSize(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape) {
  int64_t size = 1;
  for (const std::vector<int64_t>& axes : spec.dim_axes) size *= AxesSize(mesh_shape, axes);
  return size;
}

std::vector<const ir::Shape*> ShapeLeaves(const ir::Shape& shape) {
  std::vector<const ir::Shape*> leaves;
  CollectLeaves(shape, leaves);
  return leaves;
}

LeafSpecs ReplicatedLeaves(const ir::Shape& shape) {
  LeafSpecs specs;
  for (const ir::Shape* leaf : ShapeLeaves(shape)) {
    specs.push_back(ShardingSpec::Replicated(leaf->rank()));
  }
  return specs;
}

int64_t TileBytes(const ShardingSpec& spec, const ir::Shape& leaf,
                  const std::vector<int64_t>& mesh_shape) {
  if (!leaf.IsArray()) return 0;  // tokens and opaque values hold no data
  int64_t elements = 1;
  for (int64_t n : ShardDims(spec, mesh_shape, leaf.dims())) elements *= n;
  return elements * ir::DTypeByteSize(leaf.dtype());
}

int64_t LeafBytes(const LeafSpecs& specs, const ir::Shape& shape,
                  const std::vector<int64_t>& mesh_shape) {
  const std::vector<const ir::Shape*> leaves = ShapeLeaves(shape);
  ALPA_CHECK(leaves.size() == specs.size(), "{} specs for {} leaves of {}", specs.size(),
             leaves.size(), shape.ToString());
  int64_t bytes = 0;
  for (size_t i = 0; i < leaves.size(); ++i) bytes += TileBytes(specs[i], *leaves[i], mesh_shape);
  return bytes;
}

Result<double> InstructionSeconds(const ir::Instruction& instruction, const StrategyContext& ctx) {
  Result<cost::InstructionCost> cost =
      cost::EstimateInstruction(instruction, ctx.device, ctx.efficiency,
                                ctx.fused != nullptr ? *ctx.fused : cost::NoFusion());
  if (!cost.ok()) {
    return cost.status().WithContext(fmt::format("strategies of %{}", instruction.name()));
  }
  return cost->seconds - cost->launch_seconds;  // GenerateStrategies adds the launch once
}

void AddCollective(Strategy& strategy, const StrategyContext& ctx, cost::CollectiveKind kind,
                   std::vector<int64_t> axes, int64_t bytes) {
  if (axes.empty()) return;
  ALPA_CHECK(ctx.pricer != nullptr, "strategy context without a collective pricer");
  ALPA_CHECK(std::is_sorted(axes.begin(), axes.end()), "collective axes must be ascending");
  strategy.communication_seconds += ctx.pricer->StepSeconds(ReshardStep{kind, axes, bytes});
  strategy.collectives.push_back(StrategyCollective{kind, std::move(axes), bytes});
}

bool HasSeveralUsers(const ir::Instruction& instruction, const StrategyContext& ctx) {
  return !ctx.user_count || ctx.user_count(instruction) > 1;
}

std::vector<Strategy> ReduceScatterVariants(const Strategy& summed,
                                            const ir::Instruction& instruction,
                                            const std::vector<int64_t>& cut,
                                            const StrategyContext& ctx) {
  const ir::Shape& shape = instruction.shape();
  ALPA_CHECK(shape.IsArray() && summed.output.size() == 1,
             "reduce-scatter variants of %{}: not an array result", instruction.name());
  const ShardingSpec& whole = summed.output[0];
  const int64_t input_bytes = TileBytes(whole, shape, ctx.mesh_shape());
  const int64_t cut_size = AxesSize(ctx.mesh_shape(), cut);
  std::vector<Strategy> variants;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t tiles = TileCount(whole, ctx.mesh_shape(), d) * cut_size;
    if (shape.dim(d) % tiles != 0 || shape.dim(d) < tiles) continue;
    Strategy variant = summed;
    std::vector<int64_t>& axes = variant.output[0].dim_axes[static_cast<size_t>(d)];
    axes.insert(axes.end(), cut.begin(), cut.end());
    variant.name += fmt::format(" (reducescatter @ {} to dim {})", AxesString(cut), d);
    variant.memory_bytes = TileBytes(variant.output[0], shape, ctx.mesh_shape());
    AddCollective(variant, ctx, cost::CollectiveKind::kReduceScatter, cut, input_bytes);
    variants.push_back(std::move(variant));
  }
  return variants;
}

std::string AxisGroupsString(const DimAxes& groups) {
  std::string out = "{";
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i > 0) out += ",";
    out += AxisDigits(groups[i]);
  }
  return out + "}";
}

std::string AxesString(const std::vector<int64_t>& axes) {
  if (axes.size() == 1) return AxisDigits(axes);
  DimAxes singles;
  for (int64_t axis : axes) singles.push_back({axis});
  return AxisGroupsString(singles);
}

Result<LeafSpecs> LayoutBeforeCollectives(const ir::Instruction& instruction,
                                          const Strategy& strategy,
                                          std::vector<int64_t>* scatter_dims) {
  LeafSpecs specs = strategy.output;
  if (scatter_dims != nullptr) scatter_dims->assign(strategy.collectives.size(), -1);
  if (strategy.collectives.empty()) return specs;
  if (specs.size() != 1) {
    return Unimplemented("{}: collectives of a strategy with a tuple-shaped result ('{}')",
                         "%" + instruction.name(), strategy.name);
  }
  ShardingSpec& spec = specs[0];
  for (size_t c = strategy.collectives.size(); c-- > 0;) {
    const StrategyCollective& collective = strategy.collectives[c];
    if (collective.kind == cost::CollectiveKind::kReduceScatter) {
      bool found = false;
      for (int64_t d = 0; d < spec.rank() && !found; ++d) {
        std::vector<int64_t>& axes = spec.dim_axes[static_cast<size_t>(d)];
        if (axes.size() < collective.axes.size()) continue;
        std::vector<int64_t> tail(axes.end() - static_cast<std::ptrdiff_t>(collective.axes.size()),
                                  axes.end());
        std::sort(tail.begin(), tail.end());
        if (tail != collective.axes) continue;
        axes.resize(axes.size() - collective.axes.size());
        if (scatter_dims != nullptr) (*scatter_dims)[c] = d;
        found = true;
      }
      if (!found) {
        return Internal("{}: strategy '{}' reduce-scatters over axes that split no dimension",
                        "%" + instruction.name(), strategy.name);
      }
    } else if (collective.kind != cost::CollectiveKind::kAllReduce) {
      return Unimplemented("{}: strategy '{}' runs a {}, which the partitioner cannot emit yet",
                           "%" + instruction.name(), strategy.name,
                           cost::CollectiveKindName(collective.kind));
    }
    spec.partial_axes.insert(spec.partial_axes.end(), collective.axes.begin(),
                             collective.axes.end());
    std::sort(spec.partial_axes.begin(), spec.partial_axes.end());
  }
  return specs;
}

}  // namespace alpa::sharding
