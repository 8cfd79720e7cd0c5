// A training step built from a loss: forward, backward (EmitLossAndGradients) and the optimizer
// update (optimizer.h) in one computation, the program Alpa parallelises.
//
// Given loss(p_0, ..., p_n) and the parameter numbers of the model's weights W (the rest are the
// batch B), the step's entry is
//   step(W..., state..., t, B...) -> (loss, W'..., state'..., t + 1)
// with the state of each weight in the order of W (StatePerParameter arrays each) and t an
// f32 scalar counting the updates done so far (0 before the first).
#ifndef ALPA_AUTODIFF_TRAIN_STEP_H_
#define ALPA_AUTODIFF_TRAIN_STEP_H_

#include <memory>
#include <vector>

#include "autodiff/optimizer.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::autodiff {

// Weights must be float arrays of one dtype (f32 or f64 today; mixed precision is not built yet).
Result<std::unique_ptr<ir::Module>> BuildTrainStep(const ir::Module& loss,
                                                   const std::vector<int64_t>& weights,
                                                   const OptimizerConfig& optimizer);

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_TRAIN_STEP_H_
