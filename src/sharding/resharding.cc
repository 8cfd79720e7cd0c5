#include "sharding/resharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <utility>

#include "cost/mesh_collective.h"

namespace alpa::sharding {
namespace {

using cost::CollectiveKind;

// One step of a plan with its axes as a bit set (bit a: mesh axis a).
struct MaskStep {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  uint32_t axes = 0;
  int64_t bytes = 0;
};

// At most one step per collective kind (see the order in resharding.h).
struct MaskPlan {
  std::array<MaskStep, 4> steps;
  int count = 0;
};

// Per mesh axis: the dimension it splits (-1: none) and its position in that dimension's list
// counting only axes of size > 1 (an axis of size 1 cuts nothing and is left out: role R).
struct AxisRoles {
  std::array<int64_t, kMaxReshardMeshRank> dim;
  std::array<int64_t, kMaxReshardMeshRank> pos;
  uint32_t partial = 0;
};

AxisRoles RolesOf(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape) {
  const auto mesh_rank = static_cast<int64_t>(mesh_shape.size());
  AxisRoles roles;
  roles.dim.fill(-1);
  roles.pos.fill(-1);
  uint32_t used = 0;
  auto use = [&](int64_t axis) {
    ALPA_CHECK(axis >= 0 && axis < mesh_rank, "{}: mesh axis {} out of range", ToString(spec),
               axis);
    ALPA_CHECK((used & (1u << axis)) == 0, "{}: mesh axis {} used twice", ToString(spec), axis);
    used |= 1u << axis;
    return mesh_shape[static_cast<size_t>(axis)] > 1;
  };
  for (int64_t d = 0; d < spec.rank(); ++d) {
    int64_t pos = 0;
    for (int64_t axis : spec.dim_axes[static_cast<size_t>(d)]) {
      if (!use(axis)) continue;
      roles.dim[static_cast<size_t>(axis)] = d;
      roles.pos[static_cast<size_t>(axis)] = pos++;
    }
  }
  for (int64_t axis : spec.partial_axes) {
    if (use(axis)) roles.partial |= 1u << axis;
  }
  return roles;
}

// Kept: the axis splits the same dimension at the same position in A and B, after the same axes
// (it lies in the common prefix of the dimension's two lists).
bool Kept(const AxisRoles& a, const AxisRoles& b, size_t axis, int64_t mesh_rank) {
  const int64_t d = a.dim[axis];
  if (d < 0 || b.dim[axis] != d || b.pos[axis] != a.pos[axis]) return false;
  for (size_t other = 0; other < static_cast<size_t>(mesh_rank); ++other) {
    if (a.dim[other] == d && a.pos[other] < a.pos[axis] &&
        (b.dim[other] != d || b.pos[other] != a.pos[other])) {
      return false;
    }
  }
  return true;
}

// shard = element_bytes * prod_d ceil(n_d / tiles_d), tiles_d = prod of n_a over axes a with
// dim[a] == d.
int64_t ShardBytes(const std::array<int64_t, kMaxReshardMeshRank>& dim,
                   const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& tensor_dims,
                   int64_t element_bytes) {
  int64_t bytes = element_bytes;
  for (size_t d = 0; d < tensor_dims.size(); ++d) {
    int64_t tiles = 1;
    for (size_t a = 0; a < mesh_shape.size(); ++a) {
      if (dim[a] == static_cast<int64_t>(d)) tiles *= mesh_shape[a];
    }
    bytes *= (tensor_dims[d] + tiles - 1) / tiles;
  }
  return bytes;
}

// The role pairs of the table in resharding.h as bit sets of the axes of size > 1 (bit a: axis a).
struct Moves {
  AxisRoles a, b;
  int64_t mesh_rank = 0;
  uint32_t r_a = 0, s_leave = 0, r_b = 0, s_enter = 0;
  uint32_t p_a = 0;  // partial in A, not in B
};

Moves Classify(const ShardingSpec& from, const ShardingSpec& to,
               const std::vector<int64_t>& mesh_shape) {
  Moves m;
  m.mesh_rank = static_cast<int64_t>(mesh_shape.size());
  ALPA_CHECK(m.mesh_rank <= kMaxReshardMeshRank, "a mesh of {} axes; at most {} are supported",
             m.mesh_rank, kMaxReshardMeshRank);
  ALPA_CHECK(to.rank() == from.rank(), "resharding {} -> {}: the ranks differ", ToString(from),
             ToString(to));
  m.a = RolesOf(from, mesh_shape);
  m.b = RolesOf(to, mesh_shape);
  for (int64_t axis = 0; axis < m.mesh_rank; ++axis) {
    const auto i = static_cast<size_t>(axis);
    if (mesh_shape[i] == 1) continue;
    const uint32_t bit = 1u << axis;
    const bool kept = Kept(m.a, m.b, i, m.mesh_rank);
    if (m.a.dim[i] < 0 && (m.a.partial & bit) == 0) m.r_a |= bit;
    if (m.a.dim[i] >= 0 && !kept) m.s_leave |= bit;
    if (m.b.dim[i] < 0 && (m.b.partial & bit) == 0) m.r_b |= bit;
    if (m.b.dim[i] >= 0 && !kept) m.s_enter |= bit;
  }
  m.p_a = m.a.partial & ~m.b.partial;
  return m;
}

// Lowest set bit's axis; `axes` must not be empty.
size_t FirstAxis(uint32_t axes) { return static_cast<size_t>(std::countr_zero(axes)); }

// Whether every axis of `axes` splits the same dimension in `roles`.
bool OneDim(uint32_t axes, const AxisRoles& roles) {
  const int64_t d = roles.dim[FirstAxis(axes)];
  for (uint32_t rest = axes; rest != 0; rest &= rest - 1) {
    if (roles.dim[FirstAxis(rest)] != d) return false;
  }
  return true;
}

// A layout as the direct route changes it, per axis as in AxisRoles. Each of its collectives
// (spmd/reshard.h) takes axes off the minor end of a dimension's list (all-gather, all-to-all,
// a split turned partial) or puts them on the minor end (slice, reduce-scatter, all-to-all):
// the tile arithmetic of one collective allows nothing else.
class AxisStacks {
 public:
  explicit AxisStacks(const Moves& m) : roles_(m.a), mesh_rank_(static_cast<size_t>(m.mesh_rank)) {}

  int64_t DimOf(size_t axis) const { return roles_.dim[axis]; }
  int64_t Depth(int64_t d) const {
    int64_t depth = 0;
    for (size_t axis = 0; axis < mesh_rank_; ++axis) depth += roles_.dim[axis] == d ? 1 : 0;
    return depth;
  }
  // Whether `axes` (not empty) all split one dimension and are the minor-most of its list.
  bool OnTop(uint32_t axes) const {
    const int64_t d = DimOf(FirstAxis(axes));
    const int64_t bottom = Depth(d) - std::popcount(axes);
    for (uint32_t rest = axes; rest != 0; rest &= rest - 1) {
      const size_t axis = FirstAxis(rest);
      if (roles_.dim[axis] != d || roles_.pos[axis] < bottom) return false;
    }
    return true;
  }
  // Whether `axes` lie in the same order here as in `target`.
  bool SameOrder(uint32_t axes, const AxisRoles& target) const {
    for (uint32_t x = axes; x != 0; x &= x - 1) {
      for (uint32_t y = x & (x - 1); y != 0; y &= y - 1) {
        const size_t i = FirstAxis(x), j = FirstAxis(y);
        if ((roles_.pos[i] < roles_.pos[j]) != (target.pos[i] < target.pos[j])) return false;
      }
    }
    return true;
  }
  void Pop(uint32_t axes) {
    for (; axes != 0; axes &= axes - 1) {
      roles_.dim[FirstAxis(axes)] = -1;
      roles_.pos[FirstAxis(axes)] = -1;
    }
  }
  // Puts `axes` on the dimensions `target` gives them, each dimension's in `target`'s order.
  void PushAsIn(uint32_t axes, const AxisRoles& target) {
    while (axes != 0) {
      size_t next = FirstAxis(axes);
      for (uint32_t rest = axes; rest != 0; rest &= rest - 1) {
        const size_t axis = FirstAxis(rest);
        if (std::pair(target.dim[axis], target.pos[axis]) <
            std::pair(target.dim[next], target.pos[next])) {
          next = axis;
        }
      }
      roles_.pos[next] = Depth(target.dim[next]);
      roles_.dim[next] = target.dim[next];
      axes &= ~(1u << next);
    }
  }
  bool SplitsAs(const AxisRoles& target) const {
    for (size_t axis = 0; axis < mesh_rank_; ++axis) {
      if (roles_.dim[axis] != target.dim[axis]) return false;
      if (roles_.dim[axis] >= 0 && roles_.pos[axis] != target.pos[axis]) return false;
    }
    return true;
  }

 private:
  AxisRoles roles_;
  size_t mesh_rank_;
};

// Pops each dimension's share of `axes` off its top; false if one is not on top.
bool PopEachDimension(AxisStacks& stacks, uint32_t axes) {
  while (axes != 0) {
    const int64_t d = stacks.DimOf(FirstAxis(axes));
    uint32_t group = 0;
    for (uint32_t rest = axes; rest != 0; rest &= rest - 1) {
      if (stacks.DimOf(FirstAxis(rest)) == d) group |= 1u << FirstAxis(rest);
    }
    if (!stacks.OnTop(group)) return false;
    stacks.Pop(group);
    axes &= ~group;
  }
  return true;
}

// Whether the direct route's steps, each run on the layout the one before left, end in B's
// layout; `gather_first` runs step 5 before step 4.
bool DirectRouteReachesTarget(const Moves& m, bool gather_first) {
  AxisStacks stacks(m);
  stacks.PushAsIn(m.r_a & m.s_enter, m.b);  // 1. slices
  const uint32_t scatter = m.p_a & m.s_enter;
  if (scatter != 0 && !OneDim(scatter, m.b)) return false;  // 2. one reduce-scatter, one dimension
  stacks.PushAsIn(scatter, m.b);
  const uint32_t gather = m.s_leave & m.r_b;
  if (gather_first && !PopEachDimension(stacks, gather)) return false;   // 5.
  if (const uint32_t exchange = m.s_leave & m.s_enter; exchange != 0) {  // 4. one all-to-all
    if (!stacks.OnTop(exchange) || !OneDim(exchange, m.b) || !stacks.SameOrder(exchange, m.b) ||
        m.b.dim[FirstAxis(exchange)] == stacks.DimOf(FirstAxis(exchange))) {
      return false;
    }
    stacks.Pop(exchange);
    stacks.PushAsIn(exchange, m.b);
  }
  if (!gather_first && !PopEachDimension(stacks, gather)) return false;  // 5.
  if (!PopEachDimension(stacks, m.s_leave & m.b.partial)) return false;  // 6. splits to partial
  return stacks.SplitsAs(m.b);
}

ReshardRoute RouteOf(const Moves& m) {
  if (DirectRouteReachesTarget(m, /*gather_first=*/false)) return ReshardRoute::kDirect;
  if (DirectRouteReachesTarget(m, /*gather_first=*/true)) return ReshardRoute::kGatherFirst;
  return ReshardRoute::kGatherAndSlice;
}

MaskPlan PlanMasks(const ShardingSpec& from, const ShardingSpec& to,
                   const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& tensor_dims,
                   int64_t element_bytes) {
  ALPA_CHECK(from.rank() == static_cast<int64_t>(tensor_dims.size()),
             "resharding {} -> {} for a tensor of rank {}", ToString(from), ToString(to),
             tensor_dims.size());
  const Moves m = Classify(from, to, mesh_shape);
  MaskPlan plan;
  std::array<int64_t, kMaxReshardMeshRank> dim = m.a.dim;  // the layout as the steps change it
  auto move = [&](uint32_t axes, bool to_target) {
    for (size_t i = 0; i < static_cast<size_t>(m.mesh_rank); ++i) {
      if (axes & (1u << i)) dim[i] = to_target ? m.b.dim[i] : -1;
    }
  };
  // A step over `axes` (none: no step) moving the shard the layout has now.
  auto add = [&](CollectiveKind kind, uint32_t axes) {
    if (axes == 0) return;
    plan.steps[static_cast<size_t>(plan.count++)] = {
        kind, axes, ShardBytes(dim, mesh_shape, tensor_dims, element_bytes)};
  };
  const ReshardRoute route = RouteOf(m);
  if (route == ReshardRoute::kGatherAndSlice) {
    add(CollectiveKind::kAllReduce, m.p_a);
    move(m.s_leave, false);
    add(CollectiveKind::kAllGather, m.s_leave);
    return plan;  // slices and moves to partial are local
  }
  const uint32_t gather = m.s_leave & m.r_b, exchange = m.s_leave & m.s_enter;
  move(m.r_a & m.s_enter, true);                           // 1. slices
  add(CollectiveKind::kReduceScatter, m.p_a & m.s_enter);  // 2. its input
  move(m.p_a & m.s_enter, true);
  add(CollectiveKind::kAllReduce, m.p_a & m.r_b);  // 3.
  if (route == ReshardRoute::kGatherFirst) {
    move(gather, false);
    add(CollectiveKind::kAllGather, gather);  // 5. its output
  }
  add(CollectiveKind::kAllToAll, exchange);  // 4. the per-device buffer
  move(exchange, true);
  if (route == ReshardRoute::kDirect) {
    move(gather, false);
    add(CollectiveKind::kAllGather, gather);  // 5. its output
  }
  return plan;  // 6. moves to partial are local
}

}  // namespace

bool ReachedBySlicing(const ShardingSpec& from, const ShardingSpec& to) {
  if (from.rank() != to.rank() || !from.partial_axes.empty() || !to.partial_axes.empty()) {
    return false;
  }
  for (int64_t d = 0; d < from.rank(); ++d) {
    const std::vector<int64_t>& kept = from.dim_axes[static_cast<size_t>(d)];
    const std::vector<int64_t>& wanted = to.dim_axes[static_cast<size_t>(d)];
    if (kept.size() > wanted.size() || !std::equal(kept.begin(), kept.end(), wanted.begin())) {
      return false;
    }
  }
  return true;
}

ShardingSpec BroadcastOperandSpec(const ShardingSpec& spec,
                                  const std::vector<int64_t>& dimensions) {
  ShardingSpec operand = ShardingSpec::Replicated(static_cast<int64_t>(dimensions.size()));
  for (size_t i = 0; i < dimensions.size(); ++i) {
    operand.dim_axes[i] = spec.dim_axes[static_cast<size_t>(dimensions[i])];
  }
  return operand;
}

std::string ToString(const ReshardStep& step) {
  return fmt::format("{} over axes {{{}}}: {} B", cost::CollectiveKindName(step.kind),
                     fmt::join(step.axes, ","), step.bytes);
}

std::vector<ReshardStep> PlanReshard(const ShardingSpec& from, const ShardingSpec& to,
                                     const std::vector<int64_t>& mesh_shape,
                                     const std::vector<int64_t>& tensor_dims,
                                     int64_t element_bytes) {
  const MaskPlan plan = PlanMasks(from, to, mesh_shape, tensor_dims, element_bytes);
  std::vector<ReshardStep> steps;
  for (int i = 0; i < plan.count; ++i) {
    const MaskStep& s = plan.steps[static_cast<size_t>(i)];
    ReshardStep step{s.kind, {}, s.bytes};
    for (int64_t axis = 0; axis < static_cast<int64_t>(mesh_shape.size()); ++axis) {
      if (s.axes & (1u << axis)) step.axes.push_back(axis);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

ReshardRoute ChooseReshardRoute(const ShardingSpec& from, const ShardingSpec& to,
                                const std::vector<int64_t>& mesh_shape) {
  return RouteOf(Classify(from, to, mesh_shape));
}

Result<ReshardCostModel> ReshardCostModel::Create(const cluster::ClusterSpec& cluster,
                                                  const cluster::LogicalMesh& mesh) {
  const auto rank = static_cast<int64_t>(mesh.shape.size());
  if (rank > kMaxReshardMeshRank) {
    return InvalidArgument("resharding cost: a logical mesh of {} axes; at most {} are supported",
                           rank, kMaxReshardMeshRank);
  }
  ReshardCostModel model;
  model.mesh_shape_ = mesh.shape;
  model.groups_.resize(size_t{1} << rank);  // groups_[0] (no axis) stays empty, never priced
  for (uint32_t m = 1; m < (1u << rank); ++m) {
    std::vector<int64_t> axes;
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (m & (1u << axis)) axes.push_back(axis);
    }
    ALPA_ASSIGN_OR_RETURN(model.groups_[m], cost::MeshAxesGroup(cluster, mesh, axes));
  }
  return model;
}

double ReshardCostModel::MaskSeconds(CollectiveKind kind, uint32_t axes, int64_t bytes) const {
  Result<cost::CollectiveCost> cost = cost::EstimateCollective(kind, bytes, groups_[axes]);
  // The groups were validated by Create and the bytes are non-negative: no error is possible.
  ALPA_CHECK(cost.ok(), "{}", cost.status().ToString());
  return cost->seconds;
}

double ReshardCostModel::StepSeconds(const ReshardStep& step) const {
  uint32_t axes = 0;
  for (int64_t axis : step.axes) {
    ALPA_CHECK(axis >= 0 && axis < static_cast<int64_t>(mesh_shape_.size()),
               "mesh axis {} out of range", axis);
    axes |= 1u << axis;
  }
  return axes == 0 ? 0.0 : MaskSeconds(step.kind, axes, step.bytes);
}

double ReshardCostModel::Seconds(const std::vector<ReshardStep>& steps) const {
  double seconds = 0;
  for (const ReshardStep& step : steps) seconds += StepSeconds(step);
  return seconds;
}

double ReshardCostModel::ReshardSeconds(const ShardingSpec& from, const ShardingSpec& to,
                                        const std::vector<int64_t>& tensor_dims,
                                        int64_t element_bytes) const {
  const MaskPlan plan = PlanMasks(from, to, mesh_shape_, tensor_dims, element_bytes);
  double seconds = 0;
  for (int i = 0; i < plan.count; ++i) {
    const MaskStep& s = plan.steps[static_cast<size_t>(i)];
    seconds += MaskSeconds(s.kind, s.axes, s.bytes);
  }
  return seconds;
}

}  // namespace alpa::sharding
