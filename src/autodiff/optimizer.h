// Optimizers as IR: the update of one parameter from its gradient, with PyTorch's definitions.
//
//   SGD (momentum mu):  v' = mu v + g;           p' = p - lr v'          (v only when mu != 0)
//   Adam:               m' = b1 m + (1 - b1) g;  v' = b2 v + (1 - b2) g^2
//                       p' = p - lr m^ / (sqrt(v^) + eps),  m^ = m' / (1 - b1^t), v^ = v' / (1 -
//                       b2^t)
//   AdamW:              Adam's step plus decoupled weight decay: p' -= lr wd p
// t is the step number, counted from 1 at the first update (bias correction).
#ifndef ALPA_AUTODIFF_OPTIMIZER_H_
#define ALPA_AUTODIFF_OPTIMIZER_H_

#include <vector>

#include "ir/builder.h"

namespace alpa::autodiff {

enum class OptimizerKind { kSgd, kAdam, kAdamW };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  double learning_rate = 1e-3;
  double momentum = 0.0;  // SGD
  double beta1 = 0.9;     // Adam, AdamW
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;  // AdamW
};

// Arrays of optimizer state each parameter carries, of the parameter's shape: SGD's velocity
// (with momentum), Adam's m and v.
int64_t StatePerParameter(const OptimizerConfig& config);

struct ParameterUpdate {
  ir::Instruction* parameter;           // p'
  std::vector<ir::Instruction*> state;  // the state after the step, as StatePerParameter counts
};

// Emits p' and the new state from p, its gradient g, its state and `step` (a scalar of p's type
// holding t, the number of this update, from 1).
ParameterUpdate EmitParameterUpdate(const OptimizerConfig& config, ir::Instruction* p,
                                    ir::Instruction* g, const std::vector<ir::Instruction*>& state,
                                    ir::Instruction* step, ir::ComputationBuilder& b);

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_OPTIMIZER_H_
