// Stage cost acquisition (Alpa's stage profiling, reference/alpa.md 2.c), by composition: the cost
// of every model layer on every mesh configuration a stage may take, from the intra-op pass and
// the cost model, which the stage-construction DP sums over layer ranges.
//
// Each layer (pipeline/stage_slicing.h: its forward layers from the model's markers) is sliced
// into a stage loss, whose train step (forward, backward, optimizer update of its weights, and
// the gradient of the activations it receives) is auto-sharded (sharding/auto_sharding.h) on the
// logical mesh of each configuration. Layers built alike slice to identical modules, so a
// transformer's blocks are planned once per configuration (the cache key is the stage module's
// HLO text): gpt-39b's 50 layers are 3 distinct problems.
//
// A stage of layers l..i then costs the sum of its layers' costs and the resharding between
// their layouts at its inner boundaries (stage_composition.h). Alpa profiles every layer range
// instead; its ILP, like ours here, has no memory limit (stages that do not fit are excluded by
// the DP).
#ifndef ALPA_PLAN_LAYER_COSTS_H_
#define ALPA_PLAN_LAYER_COSTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cluster/submesh.h"
#include "cost/memory_model.h"
#include "ir/module.h"
#include "pipeline/stage_slicing.h"
#include "sharding/auto_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::plan {

// The cost layer's role of a train-step parameter (the step counter is "other").
cost::ParameterRole RoleOfStepParameter(autodiff::StepParameter kind);

// A sub-mesh viewed as a logical mesh; with force_batch, every value's batch dimension is split
// over axis 0 (Alpa's force_batch_dim_to_mesh_dim).
struct MeshConfig {
  cluster::Submesh submesh;
  std::vector<int64_t> logical_shape;
  bool force_batch = false;
};

// Alpa's logical spaces (reference/alpa.md 1.5): "all" tries (dp, mp) for every mp dividing the
// sub-mesh's devices, "single_node_model_parallel" only mp up to the devices of one host; both
// force the batch onto dp (skipping dp that does not divide the micro-batch) and add the
// unforced (devices, 1).
enum class LogicalSpace { kAll, kSingleNodeModelParallel };

std::vector<MeshConfig> EnumerateMeshConfigs(const cluster::ClusterSpec& cluster,
                                             const std::vector<cluster::Submesh>& submeshes,
                                             int64_t micro_batch_size, LogicalSpace space);

// The hosts a sub-mesh spans: the product of its shape but the last (devices per host) dimension.
int64_t HostsOf(const cluster::Submesh& submesh);

// The logical mesh of `config` on the cluster (its sub-mesh placed on the first hosts of its type).
Result<cluster::LogicalMesh> LogicalMeshOf(const cluster::ClusterSpec& cluster,
                                           const MeshConfig& config);

// A layer range's train step (its stage loss, pipeline/stage_slicing.h, trained on one
// micro-batch, returning the gradients of the activations it receives), ready for the intra-op
// pass.
struct StageStep {
  std::unique_ptr<ir::Module> step;
  std::vector<cost::ParameterRole> roles;
  std::vector<sharding::MethodParameter> parameters;
  // Step parameters a micro-batch in flight holds until its backward pass: the activations the
  // layer received and the model's batch (tokens, labels). Saved activations (memory_model.h)
  // are computed values only, so a layer that keeps nothing else (remat) would hold nothing.
  std::vector<int64_t> held_inputs;
  // The cotangents of the values it sends on, which a micro-batch brings to its backward pass.
  std::vector<int64_t> cotangent_inputs;
  // By the stage loss's parameter: the step parameter it is (a weight: its master copy).
  std::vector<int64_t> step_parameter;
  // The values that leave the step whole over its mesh (sharding::AutoShardingOptions::
  // whole_values): its loss (the last stage's), the gradients of the activations it received and
  // the values it sends on.
  std::vector<std::string> whole_values;
  double flops = 0;
  // How it trains: the model's training on one micro-batch, with the user's update program (if
  // any) told which of its weights the stage's are.
  autodiff::TrainStepOptions training;
};
// `model_weights` are the model's weights (parameter numbers of its loss), which the stage's
// model_parameter numbers name.
Result<StageStep> BuildStageStep(const pipeline::StageLoss& stage,
                                 const std::vector<int64_t>& model_weights,
                                 autodiff::TrainStepOptions training);

// The instruction of `step` that computes each of the `sent` values the stage sends on: the first
// carrying its pipeline::kSentAttribute (autodiff copies the forward pass before any
// recomputation), nullptr where none does.
std::vector<ir::Instruction*> SentValues(const ir::Computation& step, int64_t sent);

// `options` for auto-sharding `step` on `config`: its batch parameters, the next value of each
// carried parameter, its whole values, and the batch forced onto axis 0 when the configuration
// says so.
sharding::AutoShardingOptions StageShardingOptions(const StageStep& step, const MeshConfig& config,
                                                   sharding::AutoShardingOptions options);

// "(1,8) as [2,4] dp" style text.
std::string MeshConfigName(const MeshConfig& config);

struct LayerCost {
  bool fits = false;  // the intra-op pass found a plan
  double forward_s = 0;
  double backward_s = 0;
  double update_s = 0;
  int64_t static_bytes = 0;  // weights, optimizer state, gradients
  // Held for the backward pass, per micro-batch, as a pipeline holds it
  // (pipelined_step_memory.h): the residuals and the inputs received that the backward reads.
  int64_t activation_bytes = 0;
  // The forward's broadcasts its backward computes again as it starts (pipelined_step_memory.h).
  int64_t recomputed_bytes = 0;
  int64_t peak_bytes = 0;  // of the layer's step on one micro-batch
  // The same split by pass, as a pipeline runs it (pipelined_step_memory.h): the peak while its
  // forward and backward run, and what its update adds to the static bytes at its own peak.
  int64_t task_peak_bytes = 0;
  int64_t update_temporary_bytes = 0;
  int64_t update_result_bytes = 0;                      // of those, what stays live to its end
  std::map<cost::CollectiveKind, int64_t> collectives;  // per step
  // XLA sharding text of each of the layer's weights, in LayerCostTable::weights order.
  std::vector<std::string> weight_shardings;
  // Per weight, in the same order: what it adds to static_bytes (its master copy, optimizer
  // state and gradient) and to update_s (its update and its gradient's synchronisation), which a
  // stage holding several layers that read it (GPT's tied embedding) holds and runs once.
  std::vector<int64_t> weight_static_bytes;
  std::vector<double> weight_update_s;
  // Per weight: its gradient's bytes (of weight_static_bytes), which a pipeline sums over the
  // micro-batches (stage_composition.h).
  std::vector<int64_t> weight_gradient_bytes;
  // Per weight: the layout its gradient is summed in over the micro-batches, before the update
  // synchronises it (partial over the axes of that all-reduce; sharding::LayoutBeforeCollectives),
  // which a pipeline hands to the other stages reading the weight; replicated without a gradient.
  std::vector<sharding::ShardingSpec> weight_gradient_specs;
  // The layouts at the layer's boundaries, by position: of each value it sends on
  // (StageLoss::sent) and of the cotangent it receives for it; of each activation it receives
  // (StageLoss::activations) and of the gradient it returns for it.
  std::vector<sharding::ShardingSpec> sent_specs, cotangent_specs;
  std::vector<sharding::ShardingSpec> received_specs, input_gradient_specs;
};

// The values layer `from` sends to a later layer `to`, priced for a stage that holds both (its
// layers planned apart, stage_composition.h): the resharding of each from `from`'s layout into
// `to`'s, per micro-batch in the forward pass, and of its gradient from `to`'s layout into
// `from`'s cotangent's, per micro-batch in the backward pass.
struct LayerBoundary {
  int64_t from = 0;
  int64_t to = 0;
  double forward_s = 0;
  double backward_s = 0;
};

// The costs of `layer`'s step (of stage loss `stage`) under `solution` on a logical mesh of
// `mesh_shape`: the estimate split by pass (cost/memory_model.h), forward and backward work per
// micro-batch, the update and the gradients' collectives once per step. Errors: a sent value
// the step lost (a bug of the slicing).
Result<LayerCost> CostOfStagePlan(const pipeline::StageLoss& stage, const StageStep& layer,
                                  const sharding::ShardingSolution& solution,
                                  const std::vector<int64_t>& mesh_shape);

struct LayerCostTable {
  int64_t num_layers = 0;
  int64_t micro_batch_size = 0;  // rows of the batch per micro-batch, as the costs were taken
  bool remat = false;  // whether the layers recompute their activations (TrainStepOptions)
  std::vector<std::string> device_types;  // per host type (Submesh::host_type): its device's name
  // Per host type: whether its devices update the weights in place (XLA's compiler, with the
  // train state's buffers donated: the devices whose compiler fuses kernels). Their stages keep
  // the bound of the layers' whole-step temporaries; our CPU runtime keeps the old weights and
  // state through the update, so there a stage's update is priced apart, its layers' new values
  // added up (stage_composition.h).
  std::vector<bool> updates_in_place;
  std::vector<MeshConfig> configs;
  std::vector<LayerCost> costs;               // [layer * configs.size() + config]
  std::vector<double> flops;                  // per layer: of its step on one micro-batch
  std::vector<int64_t> output_bytes;          // per layer: the activations it sends on
  std::vector<std::vector<int64_t>> weights;  // per layer: the loss's parameter numbers it reads
  std::map<int64_t, int64_t> weight_bytes;    // by the loss's parameter number: a weight's bytes
  std::map<int64_t, ir::Shape> weight_shapes;  // and its shape
  // Per layer, the values crossing its boundaries by their names in the model's loss: those it
  // sends on (StageLoss::sent) and the activations it receives (StageLoss::activations).
  std::vector<std::vector<std::string>> sent_values;
  std::vector<std::vector<std::string>> received_values;
  std::vector<std::vector<ir::Shape>> received_shapes;  // of those activations, in their order
  // Per configuration: every pair of layers one sends values to, priced.
  std::vector<std::vector<LayerBoundary>> boundaries;
  int64_t distinct_layers = 0;
  int64_t intra_op_solves = 0;

  const LayerCost& at(int64_t layer, int64_t config) const {
    return costs[static_cast<size_t>(layer) * configs.size() + static_cast<size_t>(config)];
  }
};

struct LayerCostOptions {
  sharding::AutoShardingOptions auto_sharding;  // pins and forcing are set per configuration
  int64_t threads = 0;                          // 0: one per hardware thread
  // Called after each distinct layer: (done, total).
  std::function<void(int64_t, int64_t)> progress;
};

// `loss` at the micro-batch size, its `weights`, and how a step trains (one micro-batch: the
// pipeline accumulates). Errors: a layer that does not slice, a step that does not build, an
// op without sharding rules (these fail on every configuration; a configuration on which only
// the plan fails is marked !fits).
Result<LayerCostTable> ComputeLayerCosts(const ir::Module& loss,
                                         const std::vector<int64_t>& weights,
                                         const autodiff::TrainStepOptions& training,
                                         const cluster::ClusterSpec& cluster,
                                         std::vector<MeshConfig> configs, int64_t micro_batch_size,
                                         const LayerCostOptions& options);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_LAYER_COSTS_H_
