#include "sharding/resharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
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

// Per mesh axis: the dimension it splits (-1: none) and its position in that dimension's list.
struct AxisRoles {
  std::array<int64_t, kMaxReshardMeshRank> dim;
  std::array<int64_t, kMaxReshardMeshRank> pos;
  uint32_t partial = 0;
};

AxisRoles RolesOf(const ShardingSpec& spec, int64_t mesh_rank) {
  AxisRoles roles;
  roles.dim.fill(-1);
  roles.pos.fill(-1);
  uint32_t used = 0;
  auto use = [&](int64_t axis) {
    ALPA_CHECK(axis >= 0 && axis < mesh_rank, "{}: mesh axis {} out of range", ToString(spec),
               axis);
    ALPA_CHECK((used & (1u << axis)) == 0, "{}: mesh axis {} used twice", ToString(spec), axis);
    used |= 1u << axis;
  };
  for (int64_t d = 0; d < spec.rank(); ++d) {
    const std::vector<int64_t>& axes = spec.dim_axes[static_cast<size_t>(d)];
    for (size_t i = 0; i < axes.size(); ++i) {
      use(axes[i]);
      roles.dim[static_cast<size_t>(axes[i])] = d;
      roles.pos[static_cast<size_t>(axes[i])] = static_cast<int64_t>(i);
    }
  }
  for (int64_t axis : spec.partial_axes) {
    use(axis);
    roles.partial |= 1u << axis;
  }
  return roles;
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

MaskPlan PlanMasks(const ShardingSpec& from, const ShardingSpec& to,
                   const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& tensor_dims,
                   int64_t element_bytes) {
  const auto mesh_rank = static_cast<int64_t>(mesh_shape.size());
  ALPA_CHECK(mesh_rank <= kMaxReshardMeshRank, "a mesh of {} axes; at most {} are supported",
             mesh_rank, kMaxReshardMeshRank);
  ALPA_CHECK(from.rank() == static_cast<int64_t>(tensor_dims.size()) && to.rank() == from.rank(),
             "resharding {} -> {} for a tensor of rank {}", ToString(from), ToString(to),
             tensor_dims.size());
  const AxisRoles a = RolesOf(from, mesh_rank);
  const AxisRoles b = RolesOf(to, mesh_rank);

  // Bit sets of the roles of the axes that can communicate (size > 1).
  uint32_t r_a = 0, s_leave = 0, r_b = 0, s_enter = 0;
  for (int64_t axis = 0; axis < mesh_rank; ++axis) {
    const auto i = static_cast<size_t>(axis);
    if (mesh_shape[i] == 1) continue;
    const uint32_t bit = 1u << axis;
    // Kept: same dimension, same position, and the same axes before it (the common prefix).
    bool kept = a.dim[i] >= 0 && a.dim[i] == b.dim[i] && a.pos[i] == b.pos[i];
    if (kept) {
      const std::vector<int64_t>& la = from.dim_axes[static_cast<size_t>(a.dim[i])];
      const std::vector<int64_t>& lb = to.dim_axes[static_cast<size_t>(b.dim[i])];
      kept = std::equal(la.begin(), la.begin() + a.pos[i], lb.begin());
    }
    if (a.dim[i] < 0 && (a.partial & bit) == 0) r_a |= bit;
    if (a.dim[i] >= 0 && !kept) s_leave |= bit;
    if (b.dim[i] < 0 && (b.partial & bit) == 0) r_b |= bit;
    if (b.dim[i] >= 0 && !kept) s_enter |= bit;
  }
  const uint32_t p_a = a.partial & ~b.partial;

  MaskPlan plan;
  std::array<int64_t, kMaxReshardMeshRank> dim = a.dim;  // the layout as the steps change it
  auto move = [&](uint32_t axes, bool to_target) {
    for (size_t i = 0; i < static_cast<size_t>(mesh_rank); ++i) {
      if (axes & (1u << i)) dim[i] = to_target ? b.dim[i] : -1;
    }
  };
  // A step over `axes` (none: no step) moving the shard the layout has now.
  auto add = [&](CollectiveKind kind, uint32_t axes) {
    if (axes == 0) return;
    plan.steps[static_cast<size_t>(plan.count++)] = {
        kind, axes, ShardBytes(dim, mesh_shape, tensor_dims, element_bytes)};
  };

  move(r_a & s_enter, true);                           // 1. slices
  add(CollectiveKind::kReduceScatter, p_a & s_enter);  // 2. its input
  move(p_a & s_enter, true);
  add(CollectiveKind::kAllReduce, p_a & r_b);         // 3.
  add(CollectiveKind::kAllToAll, s_leave & s_enter);  // 4. the per-device buffer
  move(s_leave & s_enter, true);
  move(s_leave & r_b, false);
  add(CollectiveKind::kAllGather, s_leave & r_b);  // 5. its output
  return plan;                                     // 6. moves to partial are local
}

}  // namespace

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
