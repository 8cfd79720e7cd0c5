#include "sharding/dot_strategies.h"

#include <algorithm>
#include <string>
#include <utility>

#include "cluster/mesh.h"
#include "ir/dot_dimensions.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

char ClassLetter(const ContractionDim& dim) {
  if (dim.output_dim < 0) return 'k';
  if (dim.lhs_dim >= 0 && dim.rhs_dim >= 0) return 'b';
  return dim.lhs_dim >= 0 ? 'i' : 'j';
}

// What the enumeration needs from `dims`, and how to name and build a strategy from a mapping.
class ContractionBuilder {
 public:
  ContractionBuilder(const ir::Instruction& instruction, const StrategyContext& ctx,
                     const std::vector<ContractionDim>& dims, double full_seconds)
      : instruction_(instruction), ctx_(ctx), dims_(dims), full_seconds_(full_seconds) {
    for (const ContractionDim& dim : dims) class_letters_ |= ClassLetter(dim) == 'b';
  }

  // The strategies of one mapping (per entry of dims_, its axes): one without k axes; else the
  // all-reduce variant and, when allowed, the partial one.
  void AddMapping(const DimAxes& mapping, std::vector<Strategy>& out) const {
    std::vector<int64_t> k_axes;
    int64_t parallelism = 1;
    DimAxes used_groups;
    for (size_t c = 0; c < dims_.size(); ++c) {
      parallelism *= AxesSize(ctx_.mesh_shape(), mapping[c]);
      if (mapping[c].empty()) continue;
      used_groups.push_back(mapping[c]);
      if (ClassLetter(dims_[c]) == 'k') {
        k_axes.insert(k_axes.end(), mapping[c].begin(), mapping[c].end());
      }
    }
    std::sort(k_axes.begin(), k_axes.end());
    Strategy strategy = Build(mapping);
    strategy.name += " @ " + AxisGroupsString(used_groups);
    strategy.compute_seconds = full_seconds_ / static_cast<double>(parallelism);
    if (k_axes.empty()) {
      out.push_back(std::move(strategy));
      return;
    }
    Strategy partial = strategy;
    std::vector<Strategy> scattered;
    if (HasSeveralUsers(instruction_, ctx_)) {
      scattered = ReduceScatterVariants(strategy, instruction_, k_axes, ctx_);
    }
    AddAllReduce(strategy, k_axes);
    out.push_back(std::move(strategy));
    if (ctx_.options.allow_partial_outputs) {
      partial.name += " (partial @ " + AxesString(k_axes) + ")";
      partial.output[0].partial_axes = k_axes;
      out.push_back(std::move(partial));
      for (Strategy& variant : scattered) out.push_back(std::move(variant));
    }
  }

  // RR = RR x RR: every tensor whole, the full compute on every device.
  Strategy Replicated() const {
    Strategy strategy = Build(DimAxes(dims_.size()));
    strategy.compute_seconds = full_seconds_;
    return strategy;
  }

 private:
  // Specs, memory and the "out = lhs x rhs" part of the name.
  Strategy Build(const DimAxes& mapping) const {
    const ir::Shape& out_shape = instruction_.shape();
    ShardingSpec out = ShardingSpec::Replicated(out_shape.rank());
    ShardingSpec lhs = ShardingSpec::Replicated(instruction_.operand(0)->shape().rank());
    ShardingSpec rhs = ShardingSpec::Replicated(instruction_.operand(1)->shape().rank());
    std::vector<std::string> out_letters(static_cast<size_t>(out.rank()), "R");
    std::vector<std::string> lhs_letters(static_cast<size_t>(lhs.rank()), "R");
    std::vector<std::string> rhs_letters(static_cast<size_t>(rhs.rank()), "R");
    for (size_t c = 0; c < dims_.size(); ++c) {
      if (mapping[c].empty()) continue;
      const ContractionDim& dim = dims_[c];
      const std::string letter =
          class_letters_ ? std::string("S") + ClassLetter(dim) : std::string("S");
      auto place = [&](ShardingSpec& spec, std::vector<std::string>& letters, int64_t d) {
        if (d < 0) return;
        spec.dim_axes[static_cast<size_t>(d)] = mapping[c];
        letters[static_cast<size_t>(d)] = letter;
      };
      place(out, out_letters, dim.output_dim);
      place(lhs, lhs_letters, dim.lhs_dim);
      place(rhs, rhs_letters, dim.rhs_dim);
    }
    auto join = [](const std::vector<std::string>& letters) {
      std::string s;
      for (const std::string& letter : letters) s += letter;
      return s;
    };
    Strategy strategy;
    strategy.name = join(out_letters) + " = " + join(lhs_letters) + " x " + join(rhs_letters);
    strategy.memory_bytes = TileBytes(out, out_shape, ctx_.mesh_shape());
    strategy.output = {std::move(out)};
    strategy.operands = {{std::move(lhs)}, {std::move(rhs)}};
    return strategy;
  }

  // The all-reduce over the contracting axes of the output tile:
  //   AR(TileBytes(out), k axes)
  void AddAllReduce(Strategy& strategy, const std::vector<int64_t>& k_axes) const {
    strategy.name += " (allreduce @ " + AxesString(k_axes) + ")";
    AddCollective(strategy, ctx_, cost::CollectiveKind::kAllReduce, k_axes,
                  TileBytes(strategy.output[0], instruction_.shape(), ctx_.mesh_shape()));
  }

  const ir::Instruction& instruction_;
  const StrategyContext& ctx_;
  const std::vector<ContractionDim>& dims_;
  double full_seconds_;
  bool class_letters_ = false;  // name split dimensions by class ("Sb") when there is a b class
};

}  // namespace

Result<StrategySet> ContractionStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx,
                                          const std::vector<ContractionDim>& dims) {
  ALPA_CHECK(instruction.shape().IsArray() && instruction.operand_count() == 2,
             "%{}: a contraction has an array result and two operands", instruction.name());
  ALPA_ASSIGN_OR_RETURN(const double full_seconds, InstructionSeconds(instruction, ctx));

  std::vector<int64_t> sizes;
  DimSplitOptions options;
  options.maximal_only = true;
  options.exclusive_groups.emplace_back();
  for (size_t c = 0; c < dims.size(); ++c) {
    sizes.push_back(dims[c].size);
    if (ClassLetter(dims[c]) == 'k') options.exclusive_groups[0].push_back(static_cast<int64_t>(c));
  }

  const ContractionBuilder builder(instruction, ctx, dims, full_seconds);
  StrategySet set;
  for (const DimAxes& mapping : EnumerateDimSplits(sizes, ctx.mesh_shape(), options)) {
    builder.AddMapping(mapping, set.strategies);
  }
  set.strategies.push_back(builder.Replicated());
  return set;
}

Result<StrategySet> DotStrategies(const ir::Instruction& instruction, const StrategyContext& ctx) {
  if (instruction.opcode() != ir::Opcode::kDot || !instruction.attributes().dot_dims ||
      instruction.operand_count() != 2) {
    return Unimplemented("dot strategies: %{} ({}) is not a dot with dimension numbers",
                         instruction.name(), ir::OpcodeName(instruction.opcode()));
  }
  const ir::DotDimensionNumbers& numbers = *instruction.attributes().dot_dims;
  const ir::Shape& lhs = instruction.operand(0)->shape();
  const ir::Shape& rhs = instruction.operand(1)->shape();
  const std::vector<int64_t> lhs_free =
      ir::DotFreeDims(lhs.rank(), numbers.lhs_batch_dims, numbers.lhs_contracting_dims);
  const std::vector<int64_t> rhs_free =
      ir::DotFreeDims(rhs.rank(), numbers.rhs_batch_dims, numbers.rhs_contracting_dims);

  // Output dimensions: batch (in lhs_batch_dims order), lhs free, rhs free.
  std::vector<ContractionDim> dims;
  int64_t out = 0;
  for (size_t t = 0; t < numbers.lhs_batch_dims.size(); ++t) {
    dims.push_back({lhs.dim(numbers.lhs_batch_dims[t]), out++, numbers.lhs_batch_dims[t],
                    numbers.rhs_batch_dims[t]});
  }
  for (int64_t d : lhs_free) dims.push_back({lhs.dim(d), out++, d, -1});
  for (int64_t d : rhs_free) dims.push_back({rhs.dim(d), out++, -1, d});
  for (size_t t = 0; t < numbers.lhs_contracting_dims.size(); ++t) {
    dims.push_back({lhs.dim(numbers.lhs_contracting_dims[t]), -1, numbers.lhs_contracting_dims[t],
                    numbers.rhs_contracting_dims[t]});
  }
  return ContractionStrategies(instruction, ctx, dims);
}

}  // namespace alpa::sharding
