// A stage's costs composed from its layers' (layer_costs.h), as the stage-construction DP reads
// them for every layer range on every mesh configuration, and the same stage planned whole, the
// reference the composition answers to.
//
// The layers of a stage are planned apart, each choosing the layouts at its own boundaries, while
// the runtime plans the stage whole (api/pipeshard_stages.h). A stage of layers l..i on one
// configuration composes as
//   forward_s  = sum over its layers + sum over its boundaries of the values' resharding
//   backward_s = sum over its layers + sum over its boundaries of the gradients' resharding
//   update_s   = sum over its layers - each weight's update in every layer but the first that
//                reads it
//   memory     = sum of static bytes (a weight several of its layers read counted once) + sum of
//                held activations per micro-batch in flight + one micro-batch's task above them,
//                its layers run in order (the forward from the first, the backward from the
//                last, so layer k runs beside the saved activations of the layers before it):
//                  task = max over k of (sum over j < k of activation(j) + peak(k) - static(k))
//                On our CPU runtime (LayerCostTable::updates_in_place false) the update's new
//                weights and state of all its layers add up, less the gradients it frees, beside
//                the largest of their update's working values; and a backward writes its
//                micro-batch's gradients apart from their running sums, which the runtime adds
//                them to after it (XLA adds each in place as it is computed). There the task is
//                counted above the weights and optimizer state, a layer's gradients held from its
//                backward on, beside the backward of the layers before it, and their forward's
//                broadcasts, which the stage's backward computes again as it starts:
//                  task = max over k of (sum over j < k of (activation(j) + recomputed(j))
//                                        + peak(k) - state(k) + sum over j > k of gradients(j))
//                and the sums (static) are held from the end of the stage's first backward
//                (pipeline/stage_memory.h)
// where a boundary is a value layer k sends to layer j, l <= k < j <= i: its resharding from k's
// layout into j's, and its gradient's from j's layout into the layout k takes its cotangent in
// (LayerBoundary). Layers built alike agree (the solver is deterministic), so a transformer's
// blocks cost nothing at their boundaries; layers of different kinds (an embedding and a block,
// a block and the LM head) can disagree and pay.
//
// What the composition still misses: on one host of 4 V100s (tests/plan/stage_composition_test.cc)
// it lands at 0.92 to 1.02 of the whole stage's time, within 2% on 189 of 216 stages of
// gpt-350m, moe-380m and wresnet-250m. The misses price below the whole plan, most for ranges
// holding GPT's LM head on model-parallel meshes (0.94 for a block and the head on (1,4) as [4]).
// CBC proves that whole plan optimal, and pinning the whole stage's weights to the layers' own
// layouts costs more still, so the stitched plan costs more as one module than its parts and
// boundaries add up to. Pricing the handover per reader instead (the value reaching each reader
// of the parameter that stood for it, every reader keeping its strategy) brings gpt-350m to 0.95
// to 1.01 and moe-380m to 0.98 to 1.01 but prices wresnet-250m up to 1.15 of its whole stage:
// planned whole, the layouts around a boundary are chosen again, which neither bound follows.
// The composition keeps the single resharding, the closer of the two on these stages.
#ifndef ALPA_PLAN_STAGE_COMPOSITION_H_
#define ALPA_PLAN_STAGE_COMPOSITION_H_

#include <cstdint>
#include <map>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "pipeline/stage_memory.h"
#include "plan/layer_costs.h"
#include "sharding/auto_sharding.h"
#include "support/status.h"

namespace alpa::plan {

// A layer range on one configuration.
struct StageFigures {
  bool fits = true;
  double forward_s = 0, backward_s = 0, update_s = 0;
  double boundary_s = 0;  // of forward_s + backward_s: resharding between its layers
  double flops = 0;
  int64_t static_bytes = 0, activation_bytes = 0;
  // Of its layers' forward broadcasts, those their backward computes again as it starts
  // (pipelined_step_memory.h): each layer's backward runs beside those of the layers before it.
  int64_t recomputed_bytes = 0;
  // What one micro-batch's forward and backward hold above static at their peak (the header:
  // the layers run in order).
  int64_t task_bytes = 0;
  // On devices that keep the gradients' sums apart from a micro-batch's (the header): their
  // bytes, of static_bytes; its update's new weights and state less the gradients freed
  // (summed over the layers), and the largest of its layers' working values beside them.
  int64_t gradient_sum_bytes = 0;
  int64_t update_result_bytes = 0, update_working_bytes = 0;
  std::map<cost::CollectiveKind, int64_t> collectives;

  // Beside one micro-batch's activations, while its tasks run.
  int64_t temporary_bytes() const { return task_bytes - activation_bytes; }
  int64_t update_temporary_bytes() const { return update_result_bytes + update_working_bytes; }
};

StageFigures ComposeStage(const LayerCostTable& table, int64_t first, int64_t last, int64_t config);

// What the stage's devices hold, as pipeline/stage_memory.h takes it.
pipeline::StageMemory StageMemoryOf(const StageFigures& stage);

// The stages first..last on one configuration for last = first, first + 1, ..., each composed
// from the one before: ComposeStage's figures for all L layer ranges starting at `first` in O(L)
// layer additions instead of O(L^2), as the stage-construction DP reads them.
//
//   StageComposer stage(table, first, config);
//   while (stage.last() + 1 < table.num_layers) { stage.Extend(); Use(stage.figures()); }
class StageComposer {
 public:
  // An empty stage before layer `first` (last() == first - 1).
  StageComposer(const LayerCostTable& table, int64_t first, int64_t config);

  // Adds layer last() + 1, and the resharding of what it receives from the stage's layers.
  void Extend();
  int64_t last() const { return last_; }
  const StageFigures& figures() const { return stage_; }

 private:
  const LayerCostTable& table_;
  int64_t first_, last_, config_;
  bool in_place_;
  std::vector<bool> weight_held_;  // by weight number: read by a layer of the stage
  // The configuration's boundaries from layers of the stage, by receiving layer; next_ is the
  // first not yet added.
  std::vector<const LayerBoundary*> boundaries_;
  size_t next_ = 0;
  StageFigures stage_;
};

// The boundaries of `table`'s layers on configuration `config` (its layers' costs already in the
// table), priced on its logical `mesh`. A layer without a plan on the configuration has no
// boundaries there (no stage holding it fits).
Result<std::vector<LayerBoundary>> PriceLayerBoundaries(const LayerCostTable& table, int64_t config,
                                                        const cluster::ClusterSpec& cluster,
                                                        const cluster::LogicalMesh& mesh);

// Layers first..last of `loss` (its layers those of its markers) sliced into one stage loss
// whose train step is auto-sharded on `config` as one module, as the runtime plans a stage.
// `table` gives how the composition splits the costs: its device types' updates in place.
Result<StageFigures> PlanWholeStage(const ir::Module& loss, const std::vector<int64_t>& weights,
                                    const autodiff::TrainStepOptions& training,
                                    const cluster::ClusterSpec& cluster,
                                    const LayerCostTable& table, int64_t config, int64_t first,
                                    int64_t last, const sharding::AutoShardingOptions& options);

// The figures of a stage planned whole: `step` (its layers' train step as one module,
// BuildStageStep's) under `solution` on a logical mesh of `mesh_shape`, composed as one layer;
// `updates_in_place` as LayerCostTable's for the stage's devices. What the runtime runs
// (api/pipeshard_stages.h), priced before it runs. Errors: CostOfStagePlan's.
Result<StageFigures> FiguresOfStagePlan(const pipeline::StageLoss& stage, const StageStep& step,
                                        const sharding::ShardingSolution& solution,
                                        const std::vector<int64_t>& mesh_shape,
                                        bool updates_in_place);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_STAGE_COMPOSITION_H_
