// Optimizers as IR: the update of one parameter from its gradient, with PyTorch's definitions
// (SGD, Adam, AdamW) and optax's (Adafactor).
//
//   SGD (momentum mu):  v' = mu v + g;           p' = p - lr v'          (v only when mu != 0)
//   Adam:               m' = b1 m + (1 - b1) g;  v' = b2 v + (1 - b2) g^2
//                       p' = p - lr m^ / (sqrt(v^) + eps),  m^ = m' / (1 - b1^t), v^ = v' / (1 -
//                       b2^t)
//   AdamW:              Adam's step plus decoupled weight decay: p' -= lr wd p
//   Adafactor:          optax.adafactor's defaults (Shazeer & Stern 2018), which Alpa's MoE
//                       benchmark trains with: no first moment, second moments factored into a
//                       row and a column mean for parameters whose two largest dimensions a (the
//                       second largest) and b (the largest) have at least min_dim_size_to_factor:
//                         beta_t = 1 - t^-decay_rate,  G = g^2 + 1e-30
//                         r' = beta_t r + (1 - beta_t) mean_b G     (p's shape without b)
//                         c' = beta_t c + (1 - beta_t) mean_a G     (p's shape without a)
//                         u  = g rsqrt(r' / mean_a r') rsqrt(c')    (r', c' broadcast back)
//                       and otherwise one unfactored v' = beta_t v + (1 - beta_t) G, u = g
//                       rsqrt(v'); then u /= max(1, rms(u) / clipping_threshold) and
//                       p' = p - lr max(rms(p), 1e-3) u.
// t is the step number, counted from 1 at the first update (bias correction, Adafactor's decay).
#ifndef ALPA_AUTODIFF_OPTIMIZER_H_
#define ALPA_AUTODIFF_OPTIMIZER_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/builder.h"
#include "support/status.h"

namespace alpa::autodiff {

enum class OptimizerKind { kSgd, kAdam, kAdamW, kAdafactor };

// "sgd", "adam", "adamw", "adafactor": the names users give (`--optimizer`, the Python package).
std::string_view OptimizerName(OptimizerKind kind);
// The kind of one of those names; INVALID_ARGUMENT ("lamb: unknown optimizer; use one of ...")
// otherwise.
Result<OptimizerKind> ParseOptimizer(std::string_view text);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  double learning_rate = 1e-3;
  double momentum = 0.0;  // SGD
  double beta1 = 0.9;     // Adam, AdamW
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;  // AdamW
  double decay_rate = 0.8;    // Adafactor
  double clipping_threshold = 1.0;
  int64_t min_dim_size_to_factor = 128;
};

// One array of a parameter's optimizer state.
struct StateArray {
  std::string name;  // "velocity", "m", "v", "v_row", "v_col"
  std::vector<int64_t> dims;
};

// The state a parameter of dimensions `dims` carries, in the order EmitParameterUpdate reads and
// returns it: SGD's velocity (with momentum) and Adam's m and v, of the parameter's shape;
// Adafactor's v_row and v_col (factored) or v.
std::vector<StateArray> OptimizerState(const OptimizerConfig& config,
                                       const std::vector<int64_t>& dims);

struct ParameterUpdate {
  ir::Instruction* parameter;           // p'
  std::vector<ir::Instruction*> state;  // the state after the step, as OptimizerState lists it
};

// Emits p' and the new state from p, its gradient g, its state and `step` (a scalar of p's type
// holding t, the number of this update, from 1).
ParameterUpdate EmitParameterUpdate(const OptimizerConfig& config, ir::Instruction* p,
                                    ir::Instruction* g, const std::vector<ir::Instruction*>& state,
                                    ir::Instruction* step, ir::ComputationBuilder& b);

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_OPTIMIZER_H_
