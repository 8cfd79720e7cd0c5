// Resharding on one logical mesh: the collectives that turn a tensor laid out by spec A into spec
// B, and what they cost.
//
// Every mesh axis a (of size n_a > 1; an axis of size 1 holds one copy, never communicates and
// is left out of the lists below) has a role in A and in B: R (replicates), P (pending sum) or S
// (splits a dimension). A split is KEPT when the axis sits in the common prefix of A's and B's
// axis lists of the same dimension (the tiles it cuts are the same on both sides); any other
// split is LEAVING (in A) or ENTERING (in B), including an axis that stays on its dimension at
// another position.
//
//   A \ B       R             P              S entering
//   R           -             free (1)       local slice, free
//   P           all-reduce    -              reduce-scatter
//   S leaving   all-gather    free (2)       all-to-all
//
//   (1) devices at a coordinate other than 0 along a zero their copy: the sum over a is the value.
//   (2) each device puts its tile in a zero tensor of the unsplit extent: the sum over a of
//       those is the value. Both are local and cost nothing (the shard grows in (2)).
//
// The axes with the same collective form ONE collective over all of them (its replica groups
// vary along those axes together), and the steps run in the order that keeps buffers small:
//   1. slices (R -> S): free; shrink the shard before anything is sent;
//   2. reduce-scatter (P -> S):  bytes = shard before = its INPUT;
//   3. all-reduce (P -> R):      bytes = shard after 2, which reduce-scatter already shrank;
//   4. all-to-all (S -> S):      bytes = shard = the per-device buffer (its size is unchanged);
//   5. all-gather (S -> R):      bytes = shard after = its OUTPUT;
//   6. R, S -> P: free, last (a padded tile is the largest buffer).
// where shard = element_bytes * prod_d ceil(n_d / tiles_d) and tiles_d = prod of the sizes of the
// axes splitting dimension d at that point (the sizes of collective_cost.h's conventions).
//
// That is the DIRECT route. Its collectives take axes off the minor end of a dimension's list
// (all-gather, all-to-all, a split turned partial) and put them on the minor end (slice,
// reduce-scatter, all-to-all), each in one dimension per collective (one per dimension for a
// gather or a move to partial) because that is what the tile arithmetic of one collective can do
// (spmd/reshard.h). When the steps, applied in order, do not end in B's axis order, the routes
// tried next are:
//   GATHER-FIRST: step 5 before step 4, for an all-to-all that would land on top of axes still
//     to be gathered ([S0,S1] -> [R,S0]); the all-to-all then moves the gathered, larger shard.
//   GATHER-AND-SLICE, always possible, where the tiles must be permuted among devices (an axis
//     moving within its dimension, [S01] -> [S10]; an axis leaving from under another, [S01] ->
//     [S1]; splits entering a dimension in another order than B's; axes exchanged between
//     several pairs of dimensions):
//     1. all-reduce over every axis partial in A and not in B: bytes = A's shard;
//     2. all-gather over every leaving axis (the non-kept axes of a dimension are the minor end
//        of its list): bytes = the shard of the kept splits alone, its output;
//     3. slices and moves to partial: local.
// It moves more bytes than a permutation would; pricing it as what runs keeps the planner honest
// (it avoids such edges when a cheaper layout exists). Alpa's ReshardingCost instead forbids
// S -> S moves on a 2-D mesh and never produces partial operands (reference/alpa.md 2.a.3).
#ifndef ALPA_SHARDING_RESHARDING_H_
#define ALPA_SHARDING_RESHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::sharding {

// Logical meshes with more axes than this are refused (Create) or abort (PlanReshard).
inline constexpr int64_t kMaxReshardMeshRank = 8;

struct ReshardStep {
  cost::CollectiveKind kind;
  std::vector<int64_t> axes;  // ascending
  int64_t bytes = 0;          // per participant, as collective_cost.h defines it for `kind`

  friend bool operator==(const ReshardStep&, const ReshardStep&) = default;
};

// "all-gather over axes {0,1}: 2048 B".
std::string ToString(const ReshardStep& step);

// The collectives, in order, that turn `from` into `to` for a tensor of `tensor_dims` whose
// elements take `element_bytes`. Both specs must pass CheckSpec for the mesh and the tensor (the
// planner's own specs; one that does not is a bug of the caller and aborts). Identical specs,
// and any change made of slices and moves to partial only, give no step.
std::vector<ReshardStep> PlanReshard(const ShardingSpec& from, const ShardingSpec& to,
                                     const std::vector<int64_t>& mesh_shape,
                                     const std::vector<int64_t>& tensor_dims,
                                     int64_t element_bytes);

// Whether `to` is `from` with more axes entering its dimensions (each appended minor), nothing
// partial: each device cuts its tile out of its own, with no collective (step 1 above).
bool ReachedBySlicing(const ShardingSpec& from, const ShardingSpec& to);

// The layout of a broadcast's operand that a result laid out by `spec` implies: operand
// dimension i split as result dimension dimensions[i] is (the broadcast's `dimensions`).
ShardingSpec BroadcastOperandSpec(const ShardingSpec& spec, const std::vector<int64_t>& dimensions);

enum class ReshardRoute { kDirect, kGatherFirst, kGatherAndSlice };

// The route PlanReshard takes from `from` to `to` (the order of preference above).
ReshardRoute ChooseReshardRoute(const ShardingSpec& from, const ShardingSpec& to,
                                const std::vector<int64_t>& mesh_shape);

// Prices resharding on one logical mesh of a cluster. Create computes the collective group
// (cost::MeshAxesGroup) of every set of mesh axes once, so that pricing is arithmetic only:
// the planner asks for O(strategies^2 x edges) prices. Immutable, so it may be shared by threads.
class ReshardCostModel {
 public:
  // Errors: those of MeshAxesGroup, or a mesh of more than kMaxReshardMeshRank axes.
  static Result<ReshardCostModel> Create(const cluster::ClusterSpec& cluster,
                                         const cluster::LogicalMesh& mesh);

  const std::vector<int64_t>& mesh_shape() const { return mesh_shape_; }
  // Seconds of one step, and of steps run one after another (their sum).
  double StepSeconds(const ReshardStep& step) const;
  double Seconds(const std::vector<ReshardStep>& steps) const;
  // Seconds(PlanReshard(from, to, mesh_shape(), ...)) without building the step list.
  double ReshardSeconds(const ShardingSpec& from, const ShardingSpec& to,
                        const std::vector<int64_t>& tensor_dims, int64_t element_bytes) const;

 private:
  double MaskSeconds(cost::CollectiveKind kind, uint32_t axes, int64_t bytes) const;

  std::vector<int64_t> mesh_shape_;
  std::vector<cost::CollectiveGroup> groups_;  // groups_[m]: the axes whose bits are set in m
};

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_RESHARDING_H_
