#include "spmd/reshard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sharding/resharding.h"
#include "spmd/mesh_groups.h"

namespace alpa::spmd {
namespace {

using cost::CollectiveKind;
using sharding::ReshardStep;
using sharding::ShardingSpec;

struct Place {
  int64_t dim = -1;  // the dimension the axis splits, or -1
  int64_t pos = -1;  // its position in that dimension's list
};

Place PlaceOf(const ShardingSpec& spec, int64_t axis) {
  for (int64_t d = 0; d < spec.rank(); ++d) {
    const std::vector<int64_t>& axes = spec.dim_axes[static_cast<size_t>(d)];
    auto it = std::find(axes.begin(), axes.end(), axis);
    if (it != axes.end()) return {d, static_cast<int64_t>(it - axes.begin())};
  }
  return {};
}

void Erase(std::vector<int64_t>& list, int64_t value) {
  list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Axes of size 1 hold one copy: splitting or summing over them changes no tile.
ShardingSpec WithoutUnitAxes(ShardingSpec spec, const std::vector<int64_t>& mesh_shape) {
  auto unit = [&](int64_t axis) { return mesh_shape[static_cast<size_t>(axis)] == 1; };
  for (std::vector<int64_t>& axes : spec.dim_axes) std::erase_if(axes, unit);
  std::erase_if(spec.partial_axes, unit);
  return spec;
}

// `axes` grouped by the dimension they split in `to`, each group in `to`'s order.
std::map<int64_t, std::vector<int64_t>> ByTargetDim(const std::vector<int64_t>& axes,
                                                    const ShardingSpec& to) {
  std::map<int64_t, std::vector<int64_t>> groups;
  for (int64_t d = 0; d < to.rank(); ++d) {
    for (int64_t axis : to.dim_axes[static_cast<size_t>(d)]) {
      if (Contains(axes, axis)) groups[d].push_back(axis);
    }
  }
  return groups;
}

// The dimension whose minor-most axes in `cur` are exactly `axes` (any order given), or -1.
// `ordered` receives them in `cur`'s order.
int64_t SuffixDim(const ShardingSpec& cur, const std::vector<int64_t>& axes,
                  std::vector<int64_t>& ordered) {
  const int64_t dim = PlaceOf(cur, axes.front()).dim;
  if (dim < 0) return -1;
  const std::vector<int64_t>& list = cur.dim_axes[static_cast<size_t>(dim)];
  if (list.size() < axes.size()) return -1;
  ordered.assign(list.end() - static_cast<std::ptrdiff_t>(axes.size()), list.end());
  for (int64_t axis : ordered) {
    if (!Contains(axes, axis)) return -1;
  }
  return dim;
}

class Lowering {
 public:
  Lowering(SpmdBuilder& s, ir::Instruction* x, ShardingSpec from, const ShardingSpec& to,
           const std::string& what)
      : s_(s), x_(x), cur_(std::move(from)), to_(to), what_(what) {}

  Result<ir::Instruction*> Run(const ShardingSpec& from) {
    std::vector<int64_t> slice, reduce_scatter, all_reduce, all_to_all, all_gather, to_partial;
    for (int64_t axis = 0; axis < static_cast<int64_t>(s_.mesh_shape().size()); ++axis) {
      const Place a = PlaceOf(from, axis);
      const Place b = PlaceOf(to_, axis);
      bool kept = a.dim >= 0 && a.dim == b.dim && a.pos == b.pos;
      if (kept) {
        const std::vector<int64_t>& la = from.dim_axes[static_cast<size_t>(a.dim)];
        const std::vector<int64_t>& lb = to_.dim_axes[static_cast<size_t>(b.dim)];
        kept = std::equal(la.begin(), la.begin() + a.pos, lb.begin());
      }
      const bool partial_a = from.IsPartialOver(axis);
      const bool partial_b = to_.IsPartialOver(axis);
      const bool r_a = a.dim < 0 && !partial_a;
      const bool s_leave = a.dim >= 0 && !kept;
      const bool r_b = b.dim < 0 && !partial_b;
      const bool s_enter = b.dim >= 0 && !kept;
      if (r_a && s_enter) slice.push_back(axis);
      if (partial_a && s_enter) reduce_scatter.push_back(axis);
      if (partial_a && r_b) all_reduce.push_back(axis);
      if (s_leave && s_enter) all_to_all.push_back(axis);
      if (s_leave && r_b) all_gather.push_back(axis);
      if (partial_b && !partial_a) to_partial.push_back(axis);
    }
    const sharding::ReshardRoute route = sharding::ChooseReshardRoute(from, to_, s_.mesh_shape());
    if (route != sharding::ReshardRoute::kGatherAndSlice) {
      const bool gather_first = route == sharding::ReshardRoute::kGatherFirst;
      ALPA_RETURN_IF_ERROR(Slices(slice));
      ALPA_RETURN_IF_ERROR(ReduceScatter(reduce_scatter));
      ALPA_RETURN_IF_ERROR(AllReduce(all_reduce));
      if (gather_first) ALPA_RETURN_IF_ERROR(AllGather(all_gather));
      ALPA_RETURN_IF_ERROR(AllToAll(all_to_all));
      if (!gather_first) ALPA_RETURN_IF_ERROR(AllGather(all_gather));
    } else {
      // Gather-and-slice: every pending sum reduced, every leaving axis gathered (the minor end
      // of its dimension), then every entering one sliced in `to`'s order.
      all_reduce.insert(all_reduce.end(), reduce_scatter.begin(), reduce_scatter.end());
      all_gather.insert(all_gather.end(), all_to_all.begin(), all_to_all.end());
      for (int64_t axis : to_partial) {
        if (PlaceOf(from, axis).dim >= 0) all_gather.push_back(axis);
      }
      slice.insert(slice.end(), reduce_scatter.begin(), reduce_scatter.end());
      slice.insert(slice.end(), all_to_all.begin(), all_to_all.end());
      std::sort(all_reduce.begin(), all_reduce.end());
      std::sort(all_gather.begin(), all_gather.end());
      ALPA_RETURN_IF_ERROR(AllReduce(all_reduce));
      ALPA_RETURN_IF_ERROR(AllGather(all_gather));
      ALPA_RETURN_IF_ERROR(Slices(slice));
    }
    ALPA_RETURN_IF_ERROR(ToPartial(to_partial));
    ALPA_RETURN_IF_ERROR(Built());
    std::sort(cur_.partial_axes.begin(), cur_.partial_axes.end());
    if (cur_ != to_) {
      return Internal("{}: resharding {} -> {} left it as {}", what_, sharding::ToString(from),
                      sharding::ToString(to_), sharding::ToString(cur_));
    }
    return x_;
  }

  const std::vector<ReshardStep>& emitted() const { return emitted_; }

 private:
  Status Refuse(const std::string& why) const {
    return Unimplemented("{}: resharding {} -> {}: {}", what_, sharding::ToString(cur_),
                         sharding::ToString(to_), why);
  }
  Status Built() const {
    if (s_.b().status().ok()) return Status::Ok();
    return s_.b().status().WithContext(what_);
  }
  void Record(CollectiveKind kind, std::vector<int64_t> axes, const ir::Instruction* sized) {
    if (sized == nullptr) return;
    std::sort(axes.begin(), axes.end());
    emitted_.push_back(ReshardStep{kind, std::move(axes), sized->shape().ByteSize()});
  }
  int64_t Extent(int64_t dim) const { return x_->shape().dim(dim); }
  Status Divides(int64_t dim, int64_t parts) const {
    if (Extent(dim) % parts == 0) return Status::Ok();
    return Refuse(
        fmt::format("dimension {} of the tile ({} elements) does not split into {} "
                    "(uneven splits are not supported yet)",
                    dim, Extent(dim), parts));
  }

  // 1. R -> S: each device keeps its own tile of the dimension.
  Status Slices(const std::vector<int64_t>& axes) {
    for (const auto& [dim, entering] : ByTargetDim(axes, to_)) {
      const int64_t parts = s_.AxesSize(entering);
      ALPA_RETURN_IF_ERROR(Divides(dim, parts));
      std::vector<ir::Instruction*> starts(static_cast<size_t>(x_->shape().rank()), nullptr);
      std::vector<int64_t> sizes = x_->shape().dims();
      sizes[static_cast<size_t>(dim)] /= parts;
      starts[static_cast<size_t>(dim)] = s_.TileOffset(entering, sizes[static_cast<size_t>(dim)]);
      x_ = s_.SliceTile(x_, std::move(starts), std::move(sizes));
      ALPA_RETURN_IF_ERROR(Built());
      auto& list = cur_.dim_axes[static_cast<size_t>(dim)];
      list.insert(list.end(), entering.begin(), entering.end());
    }
    return Status::Ok();
  }

  // 2. P -> S: member k of a group keeps block k of the sum.
  Status ReduceScatter(const std::vector<int64_t>& axes) {
    if (axes.empty()) return Status::Ok();
    const auto groups = ByTargetDim(axes, to_);
    if (groups.size() != 1) return Refuse("the partial axes enter several dimensions");
    const auto& [dim, entering] = *groups.begin();
    ALPA_RETURN_IF_ERROR(Divides(dim, s_.AxesSize(entering)));
    Record(CollectiveKind::kReduceScatter, entering, x_);
    x_ = s_.ReduceScatter(x_, dim, entering);
    ALPA_RETURN_IF_ERROR(Built());
    for (int64_t axis : entering) Erase(cur_.partial_axes, axis);
    auto& list = cur_.dim_axes[static_cast<size_t>(dim)];
    list.insert(list.end(), entering.begin(), entering.end());
    return Status::Ok();
  }

  // 3. P -> R.
  Status AllReduce(const std::vector<int64_t>& axes) {
    if (axes.empty()) return Status::Ok();
    Record(CollectiveKind::kAllReduce, axes, x_);
    x_ = s_.AllReduce(x_, axes);
    ALPA_RETURN_IF_ERROR(Built());
    for (int64_t axis : axes) Erase(cur_.partial_axes, axis);
    return Status::Ok();
  }

  // 4. S -> S, from dimension a to dimension b (see the header for the data movement).
  Status AllToAll(const std::vector<int64_t>& axes) {
    if (axes.empty()) return Status::Ok();
    std::vector<int64_t> ordered;
    const int64_t a = SuffixDim(cur_, axes, ordered);
    const auto targets = ByTargetDim(axes, to_);
    if (a < 0 || targets.size() != 1 || targets.begin()->second != ordered ||
        targets.begin()->first == a) {
      return Refuse(
          fmt::format("an all-to-all over axes {{{}}} that is not one move of the "
                      "minor-most axes of one dimension to another",
                      fmt::join(axes, ",")));
    }
    const int64_t b = targets.begin()->first;
    const int64_t group = s_.AxesSize(ordered);
    ALPA_RETURN_IF_ERROR(Divides(b, group));
    std::vector<int64_t> dims = x_->shape().dims();
    // [.., n_a, .., n_b, ..] -> [.., n_a, .., G, n_b / G, ..]
    std::vector<int64_t> split = dims;
    split[static_cast<size_t>(b)] /= group;
    split.insert(split.begin() + b, group);
    const int64_t a_split = a < b ? a : a + 1;
    // Move G (at b) just before a.
    std::vector<int64_t> permutation;
    for (int64_t d = 0; d < static_cast<int64_t>(split.size()); ++d) {
      if (d == a_split) permutation.push_back(b);
      if (d != b) permutation.push_back(d);
    }
    ir::Instruction* blocks = s_.b().Transpose(s_.b().Reshape(x_, split), permutation);
    Record(CollectiveKind::kAllToAll, ordered, blocks);
    // G now sits at position a (a < b: nothing before a moved; a > b: b's G left the front).
    ir::Instruction* exchanged = s_.AllToAll(blocks, a, ordered);
    dims[static_cast<size_t>(a)] *= group;
    dims[static_cast<size_t>(b)] /= group;
    x_ = s_.b().Reshape(exchanged, dims);
    ALPA_RETURN_IF_ERROR(Built());
    for (int64_t axis : ordered) Erase(cur_.dim_axes[static_cast<size_t>(a)], axis);
    auto& list = cur_.dim_axes[static_cast<size_t>(b)];
    list.insert(list.end(), ordered.begin(), ordered.end());
    return Status::Ok();
  }

  // 5. S -> R: the members' tiles concatenated in member order. Axes leaving several dimensions
  // (each group the minor-most axes of its dimension) are gathered by one all-gather, as the
  // cost model prices them: over the axes A = A_0 ++ A_1 ++ ... (grouped by dimension, each in
  // its split order) into a new leading dimension of G = prod |A| members,
  //   [l_0, ..., l_r] -> [G, l_0, ..., l_r] -> [n_a for a in A, l_0, ..., l_r]
  // then each dimension's axes moved just before it and merged with it:
  //   -> [n_a for a in A_0, l_0, n_a for a in A_1, l_1, ...] -> [l_0 |A_0|, l_1 |A_1|, ...]
  // (member k's tile sits at block IndexOverAxes(k, A_d) of dimension d, first axis most major).
  Status AllGather(const std::vector<int64_t>& axes) {
    if (axes.empty()) return Status::Ok();
    std::map<int64_t, std::vector<int64_t>> by_dim;  // dimension -> its axes in cur_'s order
    for (int64_t axis : axes) by_dim[PlaceOf(cur_, axis).dim].push_back(axis);
    std::vector<int64_t> order;
    for (auto& [dim, group] : by_dim) {
      std::vector<int64_t> ordered;
      if (dim < 0 || SuffixDim(cur_, group, ordered) != dim) {
        return Refuse(
            fmt::format("an all-gather over axes {{{}}} that are not the minor-most "
                        "axes of the dimensions they split",
                        fmt::join(axes, ",")));
      }
      group = ordered;
      order.insert(order.end(), ordered.begin(), ordered.end());
    }
    x_ = by_dim.size() == 1 ? s_.AllGather(x_, by_dim.begin()->first, order)
                            : GatherSeveralDims(by_dim, order);
    ALPA_RETURN_IF_ERROR(Built());
    Record(CollectiveKind::kAllGather, order, x_);  // the gathered bytes either way
    for (const auto& [dim, group] : by_dim) {
      for (int64_t axis : group) Erase(cur_.dim_axes[static_cast<size_t>(dim)], axis);
    }
    return Status::Ok();
  }

  ir::Instruction* GatherSeveralDims(const std::map<int64_t, std::vector<int64_t>>& by_dim,
                                     const std::vector<int64_t>& order) {
    const std::vector<int64_t> tile = x_->shape().dims();
    std::vector<int64_t> leading = tile;
    leading.insert(leading.begin(), 1);
    ir::Instruction* gathered = s_.AllGather(s_.b().Reshape(x_, leading), 0, order);
    std::vector<int64_t> split;
    for (int64_t axis : order) split.push_back(s_.mesh_shape()[static_cast<size_t>(axis)]);
    split.insert(split.end(), tile.begin(), tile.end());
    const auto axis_count = static_cast<int64_t>(order.size());
    std::vector<int64_t> permutation, merged;
    int64_t position = 0;  // of the next axis of `order`
    for (int64_t d = 0; d < static_cast<int64_t>(tile.size()); ++d) {
      int64_t extent = tile[static_cast<size_t>(d)];
      if (auto group = by_dim.find(d); group != by_dim.end()) {
        for (size_t i = 0; i < group->second.size(); ++i) permutation.push_back(position++);
        extent *= s_.AxesSize(group->second);
      }
      permutation.push_back(axis_count + d);
      merged.push_back(extent);
    }
    return s_.b().Reshape(s_.b().Transpose(s_.b().Reshape(gathered, split), permutation), merged);
  }

  // 6. R, S -> P: local; the sum over the axes is the value. Split axes (each dimension's the
  // minor-most of its list) put the tile into zeros of the extent they no longer split.
  Status ToPartial(const std::vector<int64_t>& axes) {
    std::vector<int64_t> replicated;
    std::map<int64_t, std::vector<int64_t>> by_dim;  // dimension -> its axes in cur_'s order
    for (int64_t axis : axes) {
      const int64_t dim = PlaceOf(cur_, axis).dim;
      (dim >= 0 ? by_dim[dim] : replicated).push_back(axis);
    }
    if (!by_dim.empty()) {
      std::vector<int64_t> dims = x_->shape().dims();
      std::vector<ir::Instruction*> starts;
      for (int64_t d = 0; d < x_->shape().rank(); ++d) {
        starts.push_back(s_.DeviceScalar(std::vector<int64_t>(static_cast<size_t>(Devices()), 0)));
      }
      for (auto& [dim, group] : by_dim) {
        std::vector<int64_t> ordered;
        if (SuffixDim(cur_, group, ordered) != dim)
          return Refuse("split axes turning partial are not the minor-most of their dimension");
        const int64_t tile = dims[static_cast<size_t>(dim)];
        dims[static_cast<size_t>(dim)] *= s_.AxesSize(ordered);
        starts[static_cast<size_t>(dim)] = s_.TileOffset(ordered, tile);
        for (int64_t axis : ordered) Erase(cur_.dim_axes[static_cast<size_t>(dim)], axis);
      }
      x_ = s_.b().DynamicUpdateSlice(s_.Zeros(ir::Shape::Array(x_->shape().dtype(), dims)), x_,
                                     std::move(starts));
    }
    if (!replicated.empty()) {
      // keep = 1 on the devices at coordinate 0 along the axes.
      std::vector<int64_t> keep;
      for (int64_t device = 0; device < Devices(); ++device) {
        keep.push_back(IndexOverAxes(s_.mesh_shape(), device, replicated) == 0 ? 1 : 0);
      }
      ir::Instruction* flag =
          s_.b().Compare(s_.DeviceScalar(keep), s_.b().ConstantScalar(ir::DType::kS32, 0),
                         ir::ComparisonDirection::kNe);
      ir::Instruction* mask = s_.b().Broadcast(flag, x_->shape().dims(), {});
      x_ = s_.b().Select(mask, x_, s_.Zeros(x_->shape()));
    }
    ALPA_RETURN_IF_ERROR(Built());
    cur_.partial_axes.insert(cur_.partial_axes.end(), axes.begin(), axes.end());
    return Status::Ok();
  }

  int64_t Devices() const { return DeviceCount(s_.mesh_shape()); }

  SpmdBuilder& s_;
  ir::Instruction* x_;
  ShardingSpec cur_;
  const ShardingSpec& to_;
  const std::string& what_;
  std::vector<ReshardStep> emitted_;
};

}  // namespace

Result<ir::Instruction*> EmitReshard(SpmdBuilder& s, ir::Instruction* value,
                                     const ShardingSpec& from, const ShardingSpec& to,
                                     const ir::Shape& global, const std::string& what) {
  const ShardingSpec from_cut = WithoutUnitAxes(from, s.mesh_shape());
  const ShardingSpec to_cut = WithoutUnitAxes(to, s.mesh_shape());
  if (from_cut == to_cut) return value;
  Lowering lowering(s, value, from_cut, to_cut, what);
  ALPA_ASSIGN_OR_RETURN(ir::Instruction * result, lowering.Run(from_cut));
  // The program must run the collectives the cost model priced (issue 7).
  const std::vector<ReshardStep> priced = sharding::PlanReshard(
      from, to, s.mesh_shape(), global.dims(), ir::DTypeByteSize(global.dtype()));
  if (lowering.emitted() != priced) {
    std::vector<std::string> emitted_text, priced_text;
    for (const ReshardStep& step : lowering.emitted()) emitted_text.push_back(ToString(step));
    for (const ReshardStep& step : priced) priced_text.push_back(ToString(step));
    return Internal("{}: resharding {} -> {} emitted [{}] but the cost model priced [{}]", what,
                    sharding::ToString(from), sharding::ToString(to), fmt::join(emitted_text, "; "),
                    fmt::join(priced_text, "; "));
  }
  return result;
}

}  // namespace alpa::spmd
