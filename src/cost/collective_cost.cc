#include "cost/collective_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

namespace alpa::cost {
namespace {

// A level of size > 1 with m = devices per member (prod of the sizes of the levels inside it).
struct Level {
  double n;
  double alpha;
  double bw;
  double m;
};

// What every formula starts from: the levels that join more than one member, innermost first.
struct Prepared {
  std::vector<Level> levels;
  double participants = 1;  // P
  double bytes = 0;         // B
  // True when there is nothing to send (P = 1 or B = 0): the cost is 0.
  bool trivial() const { return levels.empty() || bytes == 0; }
  const Level& top() const { return levels.back(); }
};

// Level k's figures, the measured ones of `measured_kind` when that is not empty.
Status CheckFigures(size_t k, std::string_view measured_kind, double alpha, double bw) {
  auto field = [&] {
    return measured_kind.empty() ? std::string() : fmt::format("measured[{}].", measured_kind);
  };
  if (!std::isfinite(alpha) || alpha < 0) {
    return InvalidArgument("collective cost: levels[{}].{}latency_s is {}, must be finite and >= 0",
                           k, field(), alpha);
  }
  if (!std::isfinite(bw) || bw <= 0) {
    return InvalidArgument(
        "collective cost: levels[{}].{}bandwidth_bytes_per_s is {}, must be finite and > 0", k,
        field(), bw);
  }
  return Status::Ok();
}

// The levels as `kind` sees them: a level's measured figures for that kind where it has them.
Result<Prepared> Prepare(CollectiveKind kind, int64_t bytes, const CollectiveGroup& group) {
  if (bytes < 0) return InvalidArgument("collective cost: bytes is {}, must be >= 0", bytes);
  Prepared prepared;
  prepared.bytes = static_cast<double>(bytes);
  for (size_t k = 0; k < group.levels.size(); ++k) {
    const LinkLevel& level = group.levels[k];
    if (level.size < 1) {
      return InvalidArgument("collective cost: levels[{}].size is {}, must be >= 1", k, level.size);
    }
    const std::optional<cluster::LinkFigures>& measured = level.measured[static_cast<size_t>(kind)];
    const double alpha = measured.has_value() ? measured->latency : level.latency_s;
    const double bw = measured.has_value() ? measured->bandwidth : level.bandwidth_bytes_per_s;
    ALPA_RETURN_IF_ERROR(
        CheckFigures(k, measured.has_value() ? CollectiveKindName(kind) : "", alpha, bw));
    if (level.size == 1) continue;
    const double n = static_cast<double>(level.size);
    prepared.levels.push_back({n, alpha, bw, prepared.participants});
    prepared.participants *= n;
  }
  return prepared;
}

// Latency of one pass of a flat ring over all P participants, i.e. P - 1 steps. Ordered member by
// member, (n_k - 1) * prod_{j>k} n_j of its hops cross level k (these counts sum to P - 1), and a
// step over a level-k hop costs alpha_k. This is NCCL's ring latency model (tuning.cc:
// (nsteps - nInterSteps) * intraLat + nInterSteps * interLat, nInterSteps = nNodes - 1 per pass),
// generalised to any number of levels.
double RingPassLatency(const Prepared& p) {
  double latency = 0;
  double outer = p.participants;
  for (const Level& level : p.levels) {
    outer /= level.n;  // prod_{j>k} n_j
    latency += (level.n - 1) * outer * level.alpha;
  }
  return latency;
}

// The slowest link of a flat ring or chain: every link (a device's own at the inner level, a
// member's NIC at outer ones) carries the same bytes, since the ring crosses each member once.
double BottleneckBandwidth(const Prepared& p) {
  double bw = p.levels.front().bw;
  for (const Level& level : p.levels) bw = std::min(bw, level.bw);
  return bw;
}

// One pass of the flat ring with B the full buffer: a ring all-gather or reduce-scatter,
//   RingPassLatency + (P - 1)/P * B / min_k b_k.
double FlatRingPass(const Prepared& p) {
  return RingPassLatency(p) +
         (p.participants - 1) / p.participants * p.bytes / BottleneckBandwidth(p);
}

// One flat ring pass over the figures `kind` sees.
Result<CollectiveCost> FlatRingPassCost(CollectiveKind kind, int64_t bytes,
                                        const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(kind, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  return CollectiveCost{FlatRingPass(p), "ring"};
}

// Depth of a binary tree over n members.
double TreeDepth(double n) { return std::ceil(std::log2(n)); }

// Ring reduce-scatter or all-gather over one level, with B the full buffer per member:
//   (n - 1) * alpha + (n - 1) / n * B / b.
// At an outer level the member's m devices each move B/m through the shared member link, which
// is why the bandwidth term is in B, not B/m.
double RingGatherOneLevel(const Level& level, double bytes) {
  return (level.n - 1) * level.alpha + (level.n - 1) / level.n * bytes / level.bw;
}

void KeepCheaper(CollectiveCost& best, double seconds, std::string_view algorithm) {
  if (seconds < best.seconds) best = {seconds, algorithm};
}

}  // namespace

std::string_view CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kSendRecv:
      return "send-recv";
    case CollectiveKind::kCollectivePermute:
      return "collective-permute";
  }
  return "unknown";
}

// All-reduce: the cheapest of three algorithms, the choice NCCL's tuner makes between its ring and
// tree by the same kind of model (tuning.cc), plus the hierarchical algorithm of Horovod
// (HOROVOD_HIERARCHICAL_ALLREDUCE) and of 2-D mesh all-reduces (Alpa, Megatron), which pays off
// when the group crosses hosts.
//   ring  (NCCL ring; Thakur, Rabenseifner & Gropp 2005, "Optimization of Collective
//          Communication Operations in MPICH", ring = reduce-scatter + all-gather):
//            2 * RingPassLatency + 2(P - 1)/P * B / min_k b_k
//          (nccl-tests PERFORMANCE.md: all-reduce bus bandwidth = algbw * 2(n-1)/n).
//   tree  (NCCL double binary tree, "Massively Scale Your Deep Learning Training with NCCL 2.4";
//          reduce up, broadcast down, pipelined):
//            2 * sum_k ceil(log2 n_k) * alpha_k + 2 * B / min_k b_k
//   hierarchical (only with >= 2 levels): reduce-scatter up the inner levels, all-reduce over the
//          outermost level on B/m_top per device, all-gather back down:
//            sum_{k < top} 2 * [(n_k - 1) * alpha_k + (n_k - 1)/n_k * B / b_k]
//              + min(ring 2 * [(n_top - 1) * alpha_top + (n_top - 1)/n_top * B / b_top],
//                    tree 2 * ceil(log2 n_top) * alpha_top + 2 * B / b_top)   (named after it)
//          The m_top devices of a member run their outer all-reduces at once through the member's
//          link, so the outer level sees B bytes per member.
Result<CollectiveCost> AllReduceCost(int64_t bytes, const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(CollectiveKind::kAllReduce, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  CollectiveCost best{2 * FlatRingPass(p), "ring"};
  double tree_latency = 0;
  for (const Level& level : p.levels) tree_latency += 2 * TreeDepth(level.n) * level.alpha;
  KeepCheaper(best, tree_latency + 2 * p.bytes / BottleneckBandwidth(p), "tree");
  if (p.levels.size() > 1) {
    double inner = 0;
    for (size_t k = 0; k + 1 < p.levels.size(); ++k) {
      inner += 2 * RingGatherOneLevel(p.levels[k], p.bytes);
    }
    const Level& top = p.top();
    const double top_ring = 2 * RingGatherOneLevel(top, p.bytes);
    const double top_tree = 2 * TreeDepth(top.n) * top.alpha + 2 * p.bytes / top.bw;
    if (top_tree < top_ring) {
      KeepCheaper(best, inner + top_tree, "hierarchical tree");
    } else {
      KeepCheaper(best, inner + top_ring, "hierarchical ring");
    }
  }
  return best;
}

// All-gather (B = output) and reduce-scatter (B = input): NCCL's ring, the one algorithm NCCL runs
// for them, over all P participants even when they span hosts (XLA hands NCCL one replica group):
//   RingPassLatency + (P - 1)/P * B / min_k b_k
// (Thakur et al. 2005, ring all-gather (p-1)alpha + (p-1)/p n beta; nccl-tests PERFORMANCE.md:
// bus bandwidth factor (n-1)/n.) A hierarchical all-gather would send less through the NICs, but
// it is not what the libraries run, and with P - 1 steps against (n_0 - 1) + (n_1 - 1) it would
// make a group spanning hosts cheaper than the same devices in one host whenever the inter-host
// latency is under n_0 times the intra-host one.
Result<CollectiveCost> AllGatherCost(int64_t bytes, const CollectiveGroup& group) {
  return FlatRingPassCost(CollectiveKind::kAllGather, bytes, group);
}

// The same ring run backwards (Thakur et al. 2005), on the figures of a reduce-scatter.
Result<CollectiveCost> ReduceScatterCost(int64_t bytes, const CollectiveGroup& group) {
  return FlatRingPassCost(CollectiveKind::kReduceScatter, bytes, group);
}

// All-to-all: pairwise exchange (Thakur et al. 2005, long messages: (p - 1) alpha + n beta with n
// the total sent), P - 1 steps, each device sending its B/P block for one partner per step. Of
// the partners, (n_k - 1) * m_k differ first at level k; such a step costs alpha_k, and the m_k
// devices of a member sending B/P each at once share the member's link:
//   sum_k (n_k - 1) * m_k * (alpha_k + m_k * B / (P * b_k))
// One level: (n - 1) * (alpha + B / (n * b)). Across hosts the host link bounds it.
Result<CollectiveCost> AllToAllCost(int64_t bytes, const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(CollectiveKind::kAllToAll, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  double seconds = 0;
  for (const Level& level : p.levels) {
    seconds +=
        (level.n - 1) * level.m * (level.alpha + level.m * p.bytes / (p.participants * level.bw));
  }
  return CollectiveCost{seconds, "pairwise exchange"};
}

// Broadcast: NCCL's pipelined ring (a chain from the root; NCCL runs broadcast on rings only).
// With the message cut into many chunks the first chunk pays every hop's latency and the rest
// stream at the slowest link:
//   RingPassLatency + B / min_k b_k
// (nccl-tests PERFORMANCE.md: broadcast bus bandwidth = algbw, factor 1.)
Result<CollectiveCost> BroadcastCost(int64_t bytes, const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(CollectiveKind::kBroadcast, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  return CollectiveCost{RingPassLatency(p) + p.bytes / BottleneckBandwidth(p), "pipelined ring"};
}

// Send/recv of one message between two participants of the group, costed for the farthest pair
// (different members of the outermost level): alpha_top + B / b_top (Hockney's model).
Result<CollectiveCost> SendRecvCost(int64_t bytes, const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(CollectiveKind::kSendRecv, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  return CollectiveCost{p.top().alpha + p.bytes / p.top().bw, "point-to-point"};
}

// Collective-permute: every participant sends B to one partner and receives B, all at once. Costed
// for the worst permutation, where every partner is in another member of the outermost level
// (e.g. a shift by P/2): the m_top devices of a member share its link:
//   alpha_top + m_top * B / b_top          (one level: alpha + B / b)
Result<CollectiveCost> CollectivePermuteCost(int64_t bytes, const CollectiveGroup& group) {
  ALPA_ASSIGN_OR_RETURN(Prepared p, Prepare(CollectiveKind::kCollectivePermute, bytes, group));
  if (p.trivial()) return CollectiveCost{};
  const Level& top = p.top();
  return CollectiveCost{top.alpha + top.m * p.bytes / top.bw, "point-to-point"};
}

Result<CollectiveCost> EstimateCollective(CollectiveKind kind, int64_t bytes,
                                          const CollectiveGroup& group) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return AllReduceCost(bytes, group);
    case CollectiveKind::kAllGather:
      return AllGatherCost(bytes, group);
    case CollectiveKind::kReduceScatter:
      return ReduceScatterCost(bytes, group);
    case CollectiveKind::kAllToAll:
      return AllToAllCost(bytes, group);
    case CollectiveKind::kBroadcast:
      return BroadcastCost(bytes, group);
    case CollectiveKind::kSendRecv:
      return SendRecvCost(bytes, group);
    case CollectiveKind::kCollectivePermute:
      return CollectivePermuteCost(bytes, group);
  }
  return InvalidArgument("collective cost: unknown collective kind {}", static_cast<int>(kind));
}

// Alpa's formulas, verbatim from ClusterEnvironment (see the header).
Result<double> AlpaMeshDimCost(CollectiveKind kind, double bytes, int64_t n, double alpha,
                               double beta) {
  if (n < 1) return InvalidArgument("Alpa mesh-dim cost: n is {}, must be >= 1", n);
  const double d = static_cast<double>(n);
  switch (kind) {
    case CollectiveKind::kAllGather:
      return std::round(alpha + beta * (d - 1) / d * bytes) + 0.1;
    case CollectiveKind::kAllReduce:
      return std::round(alpha + beta * 2 * (d - 1) / d * bytes) + 0.01;
    case CollectiveKind::kReduceScatter:
      return std::round(alpha + beta * (d - 1) / d * bytes) + 0.001;
    case CollectiveKind::kAllToAll:
      return std::round(alpha + beta * (d - 1) / d / d * bytes * (d / 2)) + 0.001;
    default:
      return InvalidArgument("Alpa mesh-dim cost: Alpa has no cost for {}",
                             CollectiveKindName(kind));
  }
}

}  // namespace alpa::cost
