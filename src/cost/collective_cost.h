// Analytic cost of collectives over a group of devices: the alpha-beta model per link level, with
// the algorithm a real library (NCCL; MPICH; Horovod for the hierarchical all-reduce) would run.
//
// A group is a hierarchy of link levels, innermost first: e.g. {8 devices on NVLink in a host,
// 2 hosts on a 25 Gbps network}. The participants are the product of the level sizes; they are
// numbered so that the innermost level varies fastest (a logical mesh axis over 2 hosts x 8 GPUs).
// A level of size 1 joins nothing and is ignored.
//
// Level parameters (the convention of NCCL's tuning model, src/graph/tuning.cc in NCCL 2.x, which
// keeps an intra-node and an inter-node latency and bandwidth):
//   - latency_s (alpha_k): the time of one message step whose hop crosses this level (software,
//     launch and wire latency), independent of the size;
//   - bandwidth_bytes_per_s (b_k): the unidirectional bandwidth of ONE MEMBER of this level into
//     the level's interconnect. At the innermost level a member is a device: the per-device
//     bandwidth one ring step gets (e.g. NVLink per GPU per direction). At an outer level a member
//     is a whole host (or rack): b_k is the host's total NIC bandwidth per direction, SHARED by all
//     the host's participants that send across at the same time. So m devices of one host each
//     sending x bytes to other hosts take m*x/b_k, not x/b_k.
// A level can also carry figures of its own for some kinds (LinkLevel::measured, from a profiled
// link), which those kinds' formulas use in place of alpha_k and b_k.
// Derived: P = prod n_k participants; m_k = prod_{j<k} n_j devices per member of level k.
//
// Sizes (`bytes`), per collective, always per participant:
//   all-reduce          the buffer (input = output)
//   all-gather          the OUTPUT (the full gathered buffer; each participant contributes B/P)
//   reduce-scatter      the INPUT (the full buffer; each participant keeps B/P)
//   all-to-all          the per-device buffer (it sends B/P to every participant, itself included)
//   broadcast           the buffer
//   send/recv           the message
//   collective-permute  the per-device message (every participant sends one, receives one)
//
// Conventions: P = 1 or bytes = 0 cost 0 s (no message is sent; XLA removes such collectives).
// Negative bytes, a level size < 1, a negative or non-finite latency, or a non-positive or
// non-finite bandwidth is an error naming the field.
#ifndef ALPA_COST_COLLECTIVE_COST_H_
#define ALPA_COST_COLLECTIVE_COST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cluster/link.h"
#include "support/status.h"

namespace alpa::cost {

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv,
  kCollectivePermute,
};

std::string_view CollectiveKindName(CollectiveKind kind);  // "all-reduce", ... (HLO spelling)

inline constexpr std::array<CollectiveKind, 7> kCollectiveKinds = {
    CollectiveKind::kAllReduce,        CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
    CollectiveKind::kAllToAll,         CollectiveKind::kBroadcast, CollectiveKind::kSendRecv,
    CollectiveKind::kCollectivePermute};

struct LinkLevel {
  LinkLevel() = default;
  LinkLevel(int64_t size, double latency_s, double bandwidth_bytes_per_s)
      : size(size), latency_s(latency_s), bandwidth_bytes_per_s(bandwidth_bytes_per_s) {}

  int64_t size = 1;                  // members of this level in the group (n_k)
  double latency_s = 0;              // alpha_k, seconds per message step across this level
  double bandwidth_bytes_per_s = 1;  // b_k, per member of the level, one direction (see above)
  // By CollectiveKind, figures that kind sees on this level in place of the two above: the
  // measured ones of a profiled link (cluster::Link::collectives). Empty for most links.
  std::array<std::optional<cluster::LinkFigures>, kCollectiveKinds.size()> measured;
};

// Levels innermost first (devices within a host, then hosts, then racks).
struct CollectiveGroup {
  std::vector<LinkLevel> levels;
};

struct CollectiveCost {
  double seconds = 0;
  // The algorithm the estimate assumes: "none" (nothing to send), "ring", "tree",
  // "hierarchical ring", "hierarchical tree", "pairwise exchange", "pipelined ring",
  // "point-to-point". Static storage.
  std::string_view algorithm = "none";
};

// The cost of one collective of `kind` over `group`; `bytes` as defined above for that kind.
Result<CollectiveCost> EstimateCollective(CollectiveKind kind, int64_t bytes,
                                          const CollectiveGroup& group);

// One function per collective (the formulas are in collective_cost.cc, next to the code).
Result<CollectiveCost> AllReduceCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> AllGatherCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> ReduceScatterCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> AllToAllCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> BroadcastCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> SendRecvCost(int64_t bytes, const CollectiveGroup& group);
Result<CollectiveCost> CollectivePermuteCost(int64_t bytes, const CollectiveGroup& group);

// Alpa's own cost of a collective on one logical-mesh dimension (ClusterEnvironment in Alpa's
// auto_sharding_strategy.h; reference/alpa.md 2.a.3), for side-by-side comparisons. Unitless:
// alpha and beta are Alpa's mesh_alpha/mesh_beta (defaults alpha 1, beta 1 across hosts and 0.1
// inside), beta multiplies bytes. Kinds other than the four Alpa costs are an error.
//   all-gather      round(alpha + beta*(n-1)/n*B) + 0.1
//   all-reduce      round(alpha + beta*2(n-1)/n*B) + 0.01
//   reduce-scatter  round(alpha + beta*(n-1)/n*B) + 0.001
//   all-to-all      round(alpha + beta*(n-1)/n/n*B*(n/2)) + 0.001   (n/2: "to match v100+nvlink")
Result<double> AlpaMeshDimCost(CollectiveKind kind, double bytes, int64_t n, double alpha,
                               double beta);

}  // namespace alpa::cost

#endif  // ALPA_COST_COLLECTIVE_COST_H_
