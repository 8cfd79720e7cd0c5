// Sharding strategies of one instruction on a logical mesh: the choices the auto-sharding ILP
// picks from (reference/alpa.md 2.a.4, "BuildStrategyAndCost").
//
// A strategy says how the instruction's result is laid out (one spec per result leaf: a tuple
// result has several), which layout it needs each operand in (the operand is resharded to it on
// the edge, priced by resharding.h), and what the instruction itself costs per device under it:
//
//   compute_seconds        roofline time of the full instruction (cost/compute_cost.h) divided by
//                          its parallelism: the product of the sizes of the mesh axes that split
//                          the work (axes that split a result dimension or leave it partial).
//                          Replicated work is not divided, so replicating a heavy op is expensive
//                          by itself; Alpa needed an artificial penalty for that.
//   communication_seconds  collectives the instruction runs itself (the all-reduce of a dot whose
//                          contracting dimension is split, when it is not left partial).
//   memory_bytes           per-device bytes of the result leaves (the tile one device holds).
//
// A strategy set may "follow" an operand: its strategies then correspond one to one to that
// operand's (strategy i of this instruction is derived from strategy i of the operand), and the
// cost graph merges the two decisions into one variable (reference/alpa.md 2.a.6).
#ifndef ALPA_SHARDING_STRATEGY_H_
#define ALPA_SHARDING_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "ir/instruction.h"
#include "sharding/resharding.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::sharding {

// One spec per leaf of a (possibly tuple) shape, in ir::Shape's leaf order; one entry for an array.
using LeafSpecs = std::vector<ShardingSpec>;

// A collective an instruction runs as part of a strategy (bytes by collective_cost.h's convention).
struct StrategyCollective {
  cost::CollectiveKind kind = cost::CollectiveKind::kAllReduce;
  std::vector<int64_t> axes;
  int64_t bytes = 0;
  friend bool operator==(const StrategyCollective&, const StrategyCollective&) = default;
};

struct Strategy {
  // Readable and stable, in Alpa's notation where it has one: "SS = SR x RS @ {0,1}",
  // "SR = SS x SR @ {0,1} (allreduce @ 1)", "follow %add.3", "R".
  std::string name;
  LeafSpecs output;
  std::vector<LeafSpecs> operands;  // one per operand: the layout this strategy needs it in
  double compute_seconds = 0;
  double communication_seconds = 0;
  std::vector<StrategyCollective> collectives;
  int64_t memory_bytes = 0;
};

struct StrategySet {
  std::vector<Strategy> strategies;
  // The operand this set follows (strategies correspond one to one), or -1.
  int64_t follows_operand = -1;
};

struct StrategyOptions {
  // Let the output of a dot with a split contracting dimension stay a partial sum, so that its
  // user's resharding can pick a reduce-scatter instead of an all-reduce (Alpa's
  // prefer_reduce_scatter, decided by the ILP rather than by a post-pass).
  bool allow_partial_outputs = true;
  // Run an op without sharding rules (an unknown custom-call, fft, ...) replicated, as one unit,
  // instead of failing. Off by default: the user should know the op is not parallelised.
  bool replicate_unknown_ops = false;
};

// Everything a strategy generator reads: the mesh and how to price work on it, and the strategy
// sets already generated for the instruction's operands (generation runs in post order).
struct StrategyContext {
  const cluster::ClusterSpec* cluster = nullptr;
  const cluster::LogicalMesh* mesh = nullptr;
  cost::DeviceThroughput device;
  cost::Efficiency efficiency;
  // The values kept inside kernels (cost/kernel_fusion.h); null: none.
  const cost::FusedValues* fused = nullptr;
  // Prices collectives over mesh axes: the strategy's own (StepSeconds) and resharding.
  const ReshardCostModel* pricer = nullptr;
  StrategyOptions options;
  std::function<const StrategySet&(const ir::Instruction&)> strategies_of;
  // How many instructions read an instruction's result (set by the walk too; unset: assume
  // several, strategy_util.h's HasSeveralUsers).
  std::function<int64_t(const ir::Instruction&)> user_count;

  const std::vector<int64_t>& mesh_shape() const { return mesh->shape; }
};

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_STRATEGY_H_
