// The programs of a pipelined plan's stages: for every (virtual) stage, its layers' train step
// (plan/layer_costs.h: the stage loss of its layer range, trained on one micro-batch, returning
// the gradients of the activations it receives) with the values it sends on appended to its
// results, auto-sharded on the stage's logical mesh as one module (the whole stage re-solved, so
// the boundaries between its layers are priced; the layers' own plans are not pinned), partitioned
// (spmd/partitioner.h) and cut into its forward, backward and update programs
// (spmd/stage_split.h), with the layout of every value that crosses between stages.
#ifndef ALPA_API_PIPESHARD_STAGES_H_
#define ALPA_API_PIPESHARD_STAGES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "ir/module.h"
#include "pipeline/stage_slicing.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "plan/stage_composition.h"
#include "sharding/auto_sharding.h"
#include "sharding/sharding_spec.h"
#include "spmd/collective_stats.h"
#include "spmd/stage_split.h"
#include "support/status.h"

namespace alpa::api {

struct StageProgram {
  pipeline::StageLoss loss;
  std::unique_ptr<ir::Module> step;  // its train step, sent values appended to the results
  std::vector<int64_t> mesh_shape;
  std::vector<int64_t> devices;  // global ids, row-major over the logical mesh
  sharding::ShardingSolution solution;
  // Its costs under that solution (plan/stage_composition.h): what the plan's composition of
  // its layers' costs answers to, priced before it runs.
  plan::StageFigures figures;
  std::unique_ptr<ir::Module> program;  // partitioned
  spmd::StageRoles roles;
  spmd::StageSplit split;
  // The layouts of the step's parameters and of its results' leaves (results as partitioned:
  // the sent values and input gradients whole over the mesh's partial axes).
  std::vector<sharding::ShardingSpec> parameter_specs;
  // By step parameter: the stage loss's parameter it is (weights and per-micro-batch inputs),
  // -1 for the optimizer state and t.
  std::vector<int64_t> loss_parameter;
  std::vector<sharding::ShardingSpec> result_specs;
  // The model's weights (loss parameter numbers) of the step's weight parameters, in order, and
  // how many optimizer-state parameters each has.
  std::vector<int64_t> model_weights;
  std::vector<int64_t> states_per_weight;
  // Per weight: the gradient (split.gradient_names) its update reads; and per gradient, the
  // layout of its sum as the devices hold it (before its synchronisation: partial where the
  // update's all-reduce sums it).
  std::vector<int64_t> weight_gradient;
  std::vector<sharding::ShardingSpec> gradient_specs;
  // What its programs run for one micro-batch's forward and backward and the update; its
  // plan's estimate counts the same, the sums of the values leaving with a pending sum included.
  spmd::CollectiveStats collectives;
};

struct StageProgramOptions {
  sharding::AutoShardingOptions auto_sharding;
};

// The programs of every stage of `plan` (its configurations are `configs`, the layer cost
// table's). `loss` is the model's loss at the micro-batch size, its layers those of its markers.
// Errors name the stage: a layer range the loss does not have, a step that does not plan or
// partition on its mesh.
Result<std::vector<StageProgram>> BuildStagePrograms(const ir::Module& loss,
                                                     const std::vector<int64_t>& weights,
                                                     const autodiff::TrainStepOptions& training,
                                                     const cluster::ClusterSpec& cluster,
                                                     const plan::PipeshardPlan& plan,
                                                     const std::vector<plan::MeshConfig>& configs,
                                                     const StageProgramOptions& options = {});

}  // namespace alpa::api

#endif  // ALPA_API_PIPESHARD_STAGES_H_
