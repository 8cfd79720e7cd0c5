// Intra-operator auto-sharding of one computation on one logical mesh (Alpa's intra-op pass,
// reference/alpa.md 2.a): generate every instruction's strategies, build the cost graph with the
// resharding costs between them, reduce it to the solver's problem, solve, read the choice back
// and estimate the result.
//
//   min  sum_v (compute_v + communication_v)[s_v] + sum_(u,v) reshard_uv[s_u][s_v]
//   s.t. per-device memory at every step of the schedule <= budget       (Alpa's Eq. 1)
//
// The estimate serialises everything on each device: step time = compute + the collectives the
// chosen strategies run + the resharding on edges (no overlap of communication with compute).
// The peak memory is recomputed exactly for the chosen shardings over the same schedule (the
// solver's memory terms are an upper bound, cost_graph.h).
#ifndef ALPA_SHARDING_AUTO_SHARDING_H_
#define ALPA_SHARDING_AUTO_SHARDING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/liveness.h"
#include "cost/memory_model.h"
#include "ir/computation.h"
#include "sharding/strategy_graph.h"
#include "solver/request.h"
#include "solver/solve.h"
#include "support/status.h"

namespace alpa::sharding {

struct AutoShardingOptions {
  StrategyOptions strategy;
  solver::SolveOptions solve;
  // Per-device memory the plan may use; absent: the mesh's smallest device memory.
  std::optional<int64_t> memory_budget_bytes;
  cost::Efficiency efficiency;
  // Layouts the plan must use, by instruction name: one spec per result leaf (a user's
  // --shardings file, shardings present in imported HLO, a parallel method's rules). The other
  // strategies of a pinned instruction become forbidden; a pin no strategy matches is an error
  // naming the instruction and the layouts it can take.
  std::map<std::string, LeafSpecs> pinned_outputs;
  // Strategies the plan must use, by instruction name: the strategy names of a saved plan (its
  // "strategies"), so that re-planning the same step reproduces it exactly, partial sums
  // included. A name the instruction has no strategy of is an error listing its names.
  std::map<std::string, std::string> pinned_strategies;
  // Mesh axis every value's batch dimension is split over (Alpa's force_batch_dim_to_mesh_dim:
  // the dp axis of a (dp, op) mesh; on an axis of size 1 the batch stays whole), or -1 for none.
  // The batch dimensions come from batch_dims.h's analysis, seeded by `batch_parameters` (entry
  // parameter names) or, without them, by the first dot or convolution.
  int64_t force_batch_axis = -1;
  std::vector<std::string> batch_parameters;
  // Entry parameter name -> the instruction computing the value the next step reads in its place
  // (a weight's update: MethodParameter::next_value). The solver pays for resharding that value
  // into the parameter's layout (build_cost_graph.h, carried edges). On a device whose compiler
  // fuses kernels (XLA's), the parameters are donated: each next value is written over its
  // parameter's buffer where nothing reads the parameter after it (cost/liveness.h), and the
  // memory terms and the estimate's peak count it once. An unknown name, or a shape that differs,
  // is an error.
  std::map<std::string, std::string> next_values;
  // Instructions whose value leaves the program whole over the mesh: a pipeline stage's sent
  // values, input gradients and loss, which the runtime sums before they leave when the plan
  // leaves them a pending sum. A strategy that does pays that all-reduce on its own node, in the
  // problem and in the estimate (build_cost_graph.h, whole values). An unknown name is an error.
  std::vector<std::string> whole_values;
};

struct CommunicationSummary {
  std::map<cost::CollectiveKind, int64_t> count;  // collectives per step, by kind
  int64_t bytes = 0;                              // their sizes (collective_cost.h convention)
  double seconds = 0;
};

// What one node of the strategy graph costs under the chosen strategies.
struct NodeCost {
  double compute_seconds = 0;
  double communication_seconds = 0;  // the collectives its strategy runs
  // On the edges into it (its operands' resharding), and the sum of a whole value it leaves a
  // pending sum (AutoShardingOptions::whole_values).
  double resharding_seconds = 0;
};

struct ShardingEstimate {
  double compute_seconds = 0;
  double communication_seconds = 0;    // collectives the chosen strategies run themselves
  double resharding_seconds = 0;       // collectives on edges between strategies, those
                                       // reading next values in their parameters' layouts and
                                       // those summing whole values
  CommunicationSummary communication;  // both kinds together
  int64_t peak_memory_bytes = 0;       // per device, exact for the chosen shardings
  const ir::Instruction* peak_instruction = nullptr;
  std::vector<NodeCost> nodes;  // per graph node: the sums above split by where they are paid
  double carried_seconds = 0;   // part of resharding_seconds: carried values into their layouts

  double step_seconds() const {
    return compute_seconds + communication_seconds + resharding_seconds;
  }
};

// Wall-clock seconds of AutoShard's phases (reported, never used for a decision).
struct ShardingTimings {
  double generate_s = 0;    // strategy generation and pins
  double cost_graph_s = 0;  // liveness, resharding prices on edges, follower merging
  double solve_s = 0;       // the solver (heuristic, then CBC when it runs)
  double estimate_s = 0;    // reading the choice back: step time, collectives, exact peak
};

struct ShardingSolution {
  StrategyGraph graph;
  std::vector<int64_t> choice;  // per graph node
  solver::Answer answer;
  solver::Request problem;   // what the solver was given (IOPDDL, solver/iopddl_json.h)
  int64_t solver_nodes = 0;  // after follower merging
  int64_t solver_edges = 0;
  int64_t memory_budget_bytes = 0;
  // The values the mesh's device keeps inside kernels (cost::FusionFor: a fusing compiler's, or
  // our runtime's loops on a CPU device). Compute, liveness and the estimate follow it.
  cost::FusedValues fused;
  // The parameters updated in place (AutoShardingOptions::next_values on a fusing device).
  std::vector<cost::DonatedBuffer> donated;
  // What the partitioner adds around each instruction under `choice` (its operands' resharded
  // copies, its partial sums: cost/liveness.h); the estimate's peak counts it.
  cost::Lowering lowering;
  ShardingEstimate estimate;
  ShardingTimings timings;

  const Strategy& Chosen(int64_t node) const {
    return graph.nodes[static_cast<size_t>(node)]
        .set.strategies[static_cast<size_t>(choice[static_cast<size_t>(node)])];
  }
};

// The planner's solver policy (deterministic: effort bounds the search, the time limit is a
// safety net). With options.solve.kind == kAuto and no effort given:
//   1. the heuristic, bounded by kPlannerHeuristicEffort iterations and stopped after
//      kPlannerHeuristicPatience iterations without improvement, or once its answer is proven
//      within kPlannerRelativeGap of the optimum (the cost model's own error is far above what
//      further iterations gain: on gpt-1.3b on a (4, 2) mesh the best plan was found by
//      iteration 60, and 200 more found nothing; a 1.4B Flax GPT step on (4, 4) is proven within
//      0.1% in a quarter of the time the patience takes);
//   2. CBC, warm-started from it, only when the heuristic did not prove its answer within that
//      gap and the MILP is small (at most kPlannerMilpColumnLimit columns); its answer replaces the
//      heuristic's only when CBC proved it optimal (a time-limited CBC answer depends on the
//      machine's speed).
// kHeuristic without an effort is step 1 alone; kMilp, and any kind with an effort, run as the
// solver's own modes (solve.h). CBC runs one at a time in a process (AutoShardMeshes runs meshes
// on threads).
inline constexpr int64_t kPlannerHeuristicEffort = 2000;
inline constexpr int64_t kPlannerHeuristicPatience = 50;
inline constexpr double kPlannerRelativeGap = 1e-3;
inline constexpr int64_t kPlannerMilpColumnLimit = 20'000;

// Errors: an instruction without strategy rules (named, with its location), a mesh whose devices
// are not of the cluster; the memory budget cannot be met (the message gives the least memory
// found to fit); the solver found nothing within its limits.
Result<ShardingSolution> AutoShard(const ir::Computation& computation,
                                   const cluster::ClusterSpec& cluster,
                                   const cluster::LogicalMesh& mesh,
                                   const AutoShardingOptions& options);

// AutoShard on every mesh of `meshes` with the options of the same index (pins differ per mesh
// shape), on up to `threads` threads (0: one per hardware thread), results in the order of
// `meshes`. Each result is what AutoShard alone gives (the solver
// policy does not depend on the other meshes or on timing), so the output does not depend on the
// number of threads.
std::vector<Result<ShardingSolution>> AutoShardMeshes(
    const ir::Computation& computation, const cluster::ClusterSpec& cluster,
    const std::vector<cluster::LogicalMesh>& meshes,
    const std::vector<AutoShardingOptions>& options, int64_t threads = 0);

// The memory model (cost/memory_model.h) of `computation` as `solution` runs it on one device:
// each value at its chosen strategy's bytes, the solution's fused values and donated buffers.
// `roles` per entry parameter (past its end: other). Its peak is the estimate's.
cost::MemoryModel SolutionMemoryModel(const ir::Computation& computation,
                                      const ShardingSolution& solution,
                                      std::vector<cost::ParameterRole> roles,
                                      int64_t num_micro_batches = 1);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_AUTO_SHARDING_H_
