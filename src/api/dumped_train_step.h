// The roles of a dumped whole train step's parameters (forward, backward and update in one
// module, as PyTorch/XLA and JAX write them), read from what the module itself says: its
// input_output_alias (hlo/input_output_alias.h) names the state the step carries over to the next
// one, and its data flow tells weights from optimizer state.
//
//   parameter p aliased by output k, element k computed    carried state: a weight when its value
//                                                           reaches a dot, a convolution or a
//                                                           result not carried over (the loss:
//                                                           the forward reads it), optimizer
//                                                           state when it only feeds the update
//   parameter p aliased by output k, element k is p itself  passed through unchanged (PyTorch/XLA
//                                                           returns its inputs so): the batch
//   parameter not aliased, an array                         the batch
//   parameter not aliased, a scalar                         other (a learning rate, a step count)
//
// So `data` (batch split, state replicated), `zero2` and `zero3` (state split) plan a dumped step
// as they plan our own (sharding/parallel_methods.h).
#ifndef ALPA_API_DUMPED_TRAIN_STEP_H_
#define ALPA_API_DUMPED_TRAIN_STEP_H_

#include "api/parallelize.h"
#include "ir/module.h"
#include "sharding/parallel_methods.h"
#include "support/status.h"

namespace alpa::api {

// Errors (INVALID_ARGUMENT) say what the module does not carry: no input_output_alias (the step
// was dumped without donating its state), an alias into a tuple-shaped parameter or a nested
// output, no carried state that reaches a dot, batch parameters whose leading dimensions differ.
Result<TrainStep> DescribeDumpedTrainStep(const ir::Module& step);

// The step as `method` plans it, for `alpa plan`, `alpa run` and the Python package alike: a
// module that carries state (has an input_output_alias) as DescribeDumpedTrainStep reads it,
// under every method; one that carries none (an evaluation step, a forward pass) without roles
// under kShard, which needs none. Errors: DescribeDumpedTrainStep's, for a method that needs the
// roles of a module that carries nothing.
Result<TrainStep> DescribeDumpedStepFor(const ir::Module& step, sharding::ParallelMethod method);

}  // namespace alpa::api

#endif  // ALPA_API_DUMPED_TRAIN_STEP_H_
