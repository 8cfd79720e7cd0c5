// The pipeshard planner (Alpa's PipeshardParallel with AutoStageOption): cut the model's layers
// into stages and the cluster into sub-meshes, one logical mesh per stage, minimising the step
// time, with intra-op sharding inside every stage (layer_costs.h).
//
//   1. Alpa's stage-construction DP (pipeline/stage_dp.h) over layer ranges x sub-meshes x
//      logical configurations, stage time = forward + backward of one micro-batch + the
//      stage's once-per-step update / B (Alpa's has no update term), memory by
//      Alpa's rule for 1F1B: a stage followed by n stages holds n + 1 micro-batches in flight,
//        static + (n + 1) · activations + temporaries <= device memory   (paper Eq. 5)
//      Stages whose FLOP share is off their device share by more than (1 + tolerance)x are
//      pruned (Alpa's stage_imbalance_tolerance).
//   2. Beyond Alpa: the DP's best plan of every t_max it tried is re-evaluated by the exact
//      simulator (pipeline/simulator.h) under each schedule asked for, with the transfers
//      between stages and each stage's once-per-step update (gradient synchronisation and
//      optimizer):
//        step time = max over stages j of (end of j's last backward + update_j)
//      and the exact per-device memory of that schedule (pipeline/stage_memory.h); the fastest
//      one that fits wins (ties: fewer stages, then the DP's order).
//
// A transfer between consecutive stages moves the boundary activations forward and their
// gradients back, per micro-batch, as the runtime moves them (stage_handover.h): over the slowest
// link between the two sub-meshes, every device of the smaller one sending its share,
//   transfer = latency + bytes / (bandwidth x devices of the smaller sub-mesh)
// with the inter-host bandwidth shared by the devices of a host, then the receivers' local
// all-gather inside their mesh where the receiving layout replicates the value; none between
// stages on the same devices. Alpa's DP has no transfer term. A weight that several stages read
// (a tied embedding) is updated on each with the sum of all of their gradients: each holder
// receives every other holder's gradient sum before its update, by the same route,
//   update_j += sum over other holders h on other devices of exchange(h -> j)
// so that transfer_bytes_per_step, what the plan moves between sub-meshes in a step, is
//   M x (sum over boundaries between different devices of the handover's bytes between meshes:
//        each activation and its gradient once, or once per replica where its tile has no
//        dimension to cut into chunks)
//   + sum over shared weights, over ordered pairs of its holders on different devices, of its
//     gradient sum's bytes (once per term of a pending sum)
// and gather_bytes_per_step, what the receivers' all-gathers move inside their meshes, the same
// sums of (k - 1) x the bytes of each value received on k replicas. Both equal what the
// pipeline runtime moves, its stage programs' edges pinned to the layouts priced here
// (PlannedStage::edge_layouts).
#ifndef ALPA_PLAN_PIPESHARD_PLANNER_H_
#define ALPA_PLAN_PIPESHARD_PLANNER_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "pipeline/schedule.h"
#include "pipeline/simulator.h"
#include "plan/layer_costs.h"
#include "support/status.h"

namespace alpa::plan {

// Layers first..last on configuration `config` (of LayerCostTable::configs).
struct StageChoice {
  int64_t first_layer = 0;
  int64_t last_layer = 0;
  int64_t config = 0;
  friend bool operator==(const StageChoice&, const StageChoice&) = default;
};

// The layouts a plan priced at a stage's edges (stage_handover.h), by the model's value names: of
// each value the stage receives from an earlier stage, as its first reader takes it, and of the
// cotangent of each value it sends to a later one, as its sender takes it. The runtime pins its
// stage program's edges to them, so that it moves what the plan priced.
struct StageEdgeLayouts {
  std::map<std::string, sharding::ShardingSpec> received;
  std::map<std::string, sharding::ShardingSpec> cotangents;
};

struct PlannedStage {
  StageChoice choice;
  std::vector<int64_t> devices;  // global ids, row-major over the sub-mesh shape
  double forward_s = 0;          // per micro-batch
  double backward_s = 0;
  double update_s = 0;  // once per step
  // The memory of the stage's devices at their peak (pipeline/stage_memory.h): static + the
  // larger of in flight x activations + temporaries - pending gradients (at the task that holds
  // the most) and the update's temporaries (after the tasks). Under interleaved 1F1B the devices
  // hold several stages: static is their sum, activations the mean per micro-batch held at that
  // task, temporaries its stage's.
  int64_t static_bytes = 0;
  int64_t activation_bytes = 0;  // per micro-batch in flight
  int64_t temporary_bytes = 0;
  // Of static, the gradients' sums not yet held at that task (held from the end of a stage's
  // first backward where the devices keep them apart: stage_composition.h).
  int64_t pending_gradient_bytes = 0;
  int64_t update_temporary_bytes = 0;  // the update's new weights and state and its working values
  int64_t micro_batches_in_flight = 0;                  // at its peak, under the plan's schedule
  int64_t peak_memory_bytes = 0;                        // per device, under the plan's schedule
  int64_t memory_bytes = 0;                             // of one device of its sub-mesh
  std::string device_type;                              // the name of its devices' type
  std::map<cost::CollectiveKind, int64_t> collectives;  // per micro-batch step of the stage
  StageEdgeLayouts edge_layouts;
};

// Stages to evaluate, as PipeshardPlan::stages lays them out.
struct CandidateStages {
  std::vector<StageChoice> stages;
  int64_t num_chunks = 1;
};

// One stage list the planner simulated: where it came from, the stage DP's objective for it (Alpa's
// sum t + (B - 1) max t, each stage's update spread over the micro-batches; the DP's own
// candidates only), and its best simulated step, or why it does not fit. What Alpa's
// get_last_dp_result reports, and the plan document's "stage_dp".
struct EvaluatedCandidate {
  std::string source;  // "stage DP", "stage DP in 2 chunks" (interleaved 1F1B) or "given"
  CandidateStages stages;
  std::optional<double> dp_objective_s;
  std::optional<double> step_time_s;  // under its best schedule
  std::string schedule;               // that schedule's name
  std::string error;                  // why it does not fit, where it does not
};

struct PipeshardPlan {
  // V = S · num_chunks virtual stages in model order; under interleaved 1F1B (num_chunks > 1)
  // stage j runs on the devices of stage j % S.
  std::vector<PlannedStage> stages;
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::k1F1B;
  int64_t num_chunks = 1;
  int64_t num_micro_batches = 1;
  double step_time_s = 0;     // simulated pipeline + updates
  double pipeline_s = 0;      // the simulated pipeline alone
  double alpa_formula_s = 0;  // sum t + (B - 1) max t, what Alpa's DP minimises
  double bubble_fraction = 0;
  std::vector<double> forward_transfer_s;  // per stage boundary
  int64_t transfer_bytes_per_step = 0;     // between sub-meshes (header)
  int64_t gather_bytes_per_step = 0;       // inside the receiving sub-meshes (header)
  int64_t candidates_evaluated = 0;        // stage lists x schedules simulated
  std::vector<EvaluatedCandidate> evaluated;  // every stage list, in the order tried
  pipeline::SimulationResult simulation;  // of the pipeline (its timeline, for reports)
};

// `stages` (one chunk per device group, as the DP plans them) in `num_chunks` chunks per group,
// for interleaved 1F1B. Group s keeps its configuration and its n_s layers, dealt out as chunks
// of n_s / num_chunks layers (the first n_s % num_chunks of them one more); chunk c of group s is
// virtual stage c·S + s, and the virtual stages take the layers in model order. The first chunk
// of group 0 still starts at layer 0 and the last chunk of group S - 1 ends at the last layer,
// so the embedding and the head stay on the groups the DP gave them. Nullopt with one group, or
// when a group has fewer layers than chunks.
std::optional<CandidateStages> InterleaveStages(const std::vector<StageChoice>& stages,
                                                int64_t num_chunks);

struct PipeshardOptions {
  int64_t num_micro_batches = 1;
  std::vector<pipeline::ScheduleKind> schedules = {pipeline::ScheduleKind::k1F1B,
                                                   pipeline::ScheduleKind::kGPipe};
  double imbalance_tolerance = std::numeric_limits<double>::infinity();
  int64_t max_candidates = 8;
  // Stage lists simulated beside the DP's candidates (alpa plan passes the uniform grid's). The
  // DP ranks plans by Alpa's formula, which sees no transfers between stages; under 1F1B, with
  // few micro-batches in flight, a large transfer stretches every micro-batch's round trip, and
  // only the simulator sees that (wresnet-4b on 16 V100s: the DP's best plan simulates 4% slower
  // than the grid point dp 8, pp 2).
  std::vector<CandidateStages> extra_candidates = {};
};

// The best plan of the DP's candidates (each also in 2 chunks, InterleaveStages, when interleaved
// 1F1B is among the schedules) and options.extra_candidates, by simulated step time;
// NOT_FOUND (with the smallest memory a single layer needs, or why) when no
// combination of stages fits the cluster.
Result<PipeshardPlan> PlanPipeshard(const LayerCostTable& table,
                                    const cluster::ClusterSpec& cluster,
                                    const PipeshardOptions& options);

// Evaluates given stages (a manual plan: contiguous layers from 0, sub-meshes tiling the
// cluster; with num_chunks > 1, interleaved 1F1B's virtual stages, stage j on the devices and in
// the configuration of stage j % S) under `schedule`. Errors name the stage that does not fit,
// or what does not cover.
Result<PipeshardPlan> EvaluateStages(const LayerCostTable& table,
                                     const cluster::ClusterSpec& cluster,
                                     const std::vector<StageChoice>& stages,
                                     pipeline::ScheduleKind schedule, int64_t num_micro_batches,
                                     int64_t num_chunks = 1);

// The fastest of EvaluateStages under each of `schedules` (at least one); when none fits, the
// last one's error. With one chunk, interleaved 1F1B is 1F1B and is evaluated only in its place;
// with several, it is the only schedule that runs them.
Result<PipeshardPlan> EvaluateSchedules(const LayerCostTable& table,
                                        const cluster::ClusterSpec& cluster,
                                        const std::vector<StageChoice>& stages,
                                        const std::vector<pipeline::ScheduleKind>& schedules,
                                        int64_t num_micro_batches, int64_t num_chunks = 1);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_PIPESHARD_PLANNER_H_
