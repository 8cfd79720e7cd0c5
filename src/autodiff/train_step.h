// A training step built from a loss: forward, backward (EmitLossAndGradients) and the optimizer
// update (optimizer.h) in one computation, the program Alpa parallelises.
//
// Given loss(p_0, ..., p_n) and the parameter numbers of the model's weights W (the rest are the
// batch B), the step's entry is
//   step(W..., state..., t, B...) -> (loss, W'..., state'..., t + 1)
// with the state of each weight in the order of W (OptimizerState of its shape) and t a scalar
// of the master weights' type counting the updates done so far (0 before the first).
//
// Mixed precision (Alpa's benchmarks: f16 parameters and activations, f32 master copy): when the
// loss's weights are f16 or bf16, the step's W, state and update are f32 master weights; each
// step converts them to the loss's type for the forward and backward pass and converts the
// gradients back to f32. With loss_scale s the backward pass starts from ds/dloss = s instead of
// 1 (keeping small f16 gradients from flushing to zero) and the gradients are divided by s in f32.
//
// Input gradients: batch parameters x (numbers in the loss) whose gradients the step also
// returns, after t + 1, in their order:
//   (loss, W'..., state'..., t + 1, dloss/dx...)
// A pipeline stage's step returns the gradient of the activations it received, which the
// previous stage's backward pass reads. Only with one micro-batch.
//
// Gradient accumulation: with num_micro_batches = M > 1, `loss` is the loss of one micro-batch
// (built at the micro-batch size, as JAX traces it) and each batch parameter of the step is M
// micro-batches stacked along dimension 0. The forward and backward pass run once per
// micro-batch (unrolled) and the update uses the means of their losses and gradients. For a loss
// that is a mean over its batch this equals the step on the whole batch up to rounding.
//
// Rematerialisation (remat): the backward pass recomputes each layer's activations from the
// values that enter the layer instead of keeping the forward pass's (grad.h, GradOptions).
//
// The user's optimizer (update_program.h, a JAX step's optax update) in place of ours: the
// step's state is then each weight's states as the program splits them, in the order of W, and
// the program's shared states in place of t,
//   step(W..., state..., shared..., B...) -> (loss, W'..., state'..., shared'...)
// with the weights, gradients and update in the loss's own type (JAX's step does its own mixed
// precision) and no loss scale.
#ifndef ALPA_AUTODIFF_TRAIN_STEP_H_
#define ALPA_AUTODIFF_TRAIN_STEP_H_

#include <memory>
#include <vector>

#include "autodiff/optimizer.h"
#include "autodiff/update_program.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::autodiff {

struct TrainStepOptions {
  OptimizerConfig optimizer;
  int64_t num_micro_batches = 1;
  bool remat = false;
  double loss_scale = 1.0;
  // The user's optimizer in place of `optimizer`, and for each weight the program's weight it is
  // (empty: weight i is the program's i-th).
  std::shared_ptr<const UpdateProgram> update = nullptr;
  std::vector<int64_t> update_weights = {};
};

// The state the step carries besides its weights: each weight's arrays (OptimizerState's, or
// the update program's) and the states all weights share (t, or the program's shared ones).
struct StepStateCounts {
  std::vector<int64_t> per_weight;
  int64_t shared = 0;
};
StepStateCounts StateCounts(const ir::Module& loss, const std::vector<int64_t>& weights,
                            const TrainStepOptions& options);

// The type of the step's weights and optimizer state for weights of `weight_type` in the loss:
// f32 for f16 and bf16 (the master copy), the type itself otherwise.
ir::DType MasterWeightType(ir::DType weight_type);

// What each entry parameter of a step is, in parameter order (the layout above), for `loss` trained
// in `weights` (each weight's state: StateCounts). kSharedState is t for our optimizers.
enum class StepParameter { kWeight, kOptimizerState, kSharedState, kBatch };
std::vector<StepParameter> StepParameterLayout(const ir::Module& loss,
                                               const std::vector<int64_t>& weights,
                                               const TrainStepOptions& options);

// For each parameter of `layout`, the element of the step's result tuple the next step reads in
// its place: 1 + its index for weights, optimizer state and the shared state (the result is
// (loss, W'..., state'..., t + 1)), -1 for the batch.
std::vector<int64_t> StepNextValueElements(const std::vector<StepParameter>& layout);

// The gradient each of `next_values` (a step's new weights) is updated from: of the
// gradient-tagged instructions it is computed from, the last in `step`'s instruction order (the
// divided one where the sum is divided by the micro-batches or a loss scale); nullptr where none
// is.
std::vector<const ir::Instruction*> UpdateGradients(
    const ir::Computation& step, const std::vector<const ir::Instruction*>& next_values);

// Weights must be float arrays of one dtype. The loss and the gradients of the weights (each
// micro-batch's and their sums) carry value tags (ir/value_tag.h).
Result<std::unique_ptr<ir::Module>> BuildTrainStep(
    const ir::Module& loss, const std::vector<int64_t>& weights, const TrainStepOptions& options,
    const std::vector<int64_t>& input_gradients = {});

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_TRAIN_STEP_H_
