// An optimizer written in the user's framework instead of ours (optimizer.h): the part of a JAX
// train step after its gradient (optax's update and apply_updates, a Flax TrainState's
// apply_gradients), lowered by JAX as one module
//
//   apply(W_1..W_n, G_1..G_n, S_1..S_m) -> (W'_1..W'_n, S'_1..S'_m)
//
// with G_i the gradient of weight W_i, S the other values the step carries (optax's moments and
// count, the TrainState's step) and S'_j the next value of S_j.
//
// A pipeline updates each weight on the stage that holds it, so the program is split by weight
// (Alpa slices its apply_grad computation per stage the same way). State j belongs to weight i
// when its next value reads W_i or G_i (Adam's mu_i and nu_i); it is shared when it reads no
// weight (optax's count, the TrainState's step), and then every stage keeps and advances its own
// copy, as every stage of our own optimizers does with t. A program in which one value reads two
// weights (optax.clip_by_global_norm, a learning rate scaled by the gradient norm) couples the
// stages, and is refused with the state or weight it couples.
#ifndef ALPA_AUTODIFF_UPDATE_PROGRAM_H_
#define ALPA_AUTODIFF_UPDATE_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/builder.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::autodiff {

struct UpdateProgram {
  std::shared_ptr<const ir::Module> module;
  int64_t num_weights = 0;
  // [i]: the states (indices j of S) weight i's update reads and writes, in order.
  std::vector<std::vector<int64_t>> weight_states;
  std::vector<int64_t> shared_states;  // in order

  const ir::Shape& weight_shape(int64_t i) const;
  const ir::Shape& state_shape(int64_t j) const;
};

// Splits `module` (its entry as above) for `num_weights` weights. Errors: parameters or results
// that do not fit the form above (counts, shapes), and a value that reads two weights, naming it.
Result<UpdateProgram> SplitUpdateProgram(std::shared_ptr<const ir::Module> module,
                                         int64_t num_weights);

// The next values of some of the program's weights and of the shared states.
struct EmittedUpdate {
  std::vector<ir::Instruction*> weights;              // W'_i, by position in `weights`
  std::vector<std::vector<ir::Instruction*>> states;  // their states' next values
  std::vector<ir::Instruction*> shared;               // S'_j of the shared states
};

// Emits into `b` the update of the program's weights `weights` (indices i) and of the shared
// states, from their values, gradients and states (each weight's, as weight_states lists them)
// and the shared states' values. The copies are the program's instructions, nothing else.
Result<EmittedUpdate> EmitProgramUpdate(const UpdateProgram& program,
                                        const std::vector<int64_t>& weights,
                                        const std::vector<ir::Instruction*>& values,
                                        const std::vector<ir::Instruction*>& gradients,
                                        const std::vector<std::vector<ir::Instruction*>>& states,
                                        const std::vector<ir::Instruction*>& shared,
                                        ir::ComputationBuilder& b);

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_UPDATE_PROGRAM_H_
