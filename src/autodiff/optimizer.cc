#include "autodiff/optimizer.h"

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;

int64_t StatePerParameter(const OptimizerConfig& config) {
  switch (config.kind) {
    case OptimizerKind::kSgd:
      return config.momentum != 0 ? 1 : 0;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return 2;
  }
  return 0;
}

ParameterUpdate EmitParameterUpdate(const OptimizerConfig& config, Instruction* p, Instruction* g,
                                    const std::vector<Instruction*>& state, Instruction* step,
                                    ir::ComputationBuilder& b) {
  // Scalars broadcast to p's shape; `scalar` keeps a step-dependent value as a scalar.
  auto full = [&](double value) { return Full(b, p, value); };
  auto spread = [&](Instruction* scalar) { return b.Broadcast(scalar, p->shape().dims(), {}); };
  const ir::DType dtype = p->shape().dtype();
  if (config.kind == OptimizerKind::kSgd) {
    if (config.momentum == 0) {
      return {b.Subtract(p, b.Multiply(full(config.learning_rate), g)), {}};
    }
    Instruction* velocity = b.Add(b.Multiply(full(config.momentum), state[0]), g);
    return {b.Subtract(p, b.Multiply(full(config.learning_rate), velocity)), {velocity}};
  }
  Instruction* m =
      b.Add(b.Multiply(full(config.beta1), state[0]), b.Multiply(full(1 - config.beta1), g));
  Instruction* v = b.Add(b.Multiply(full(config.beta2), state[1]),
                         b.Multiply(full(1 - config.beta2), b.Multiply(g, g)));
  // Bias corrections 1 - b^t, computed once as scalars.
  auto correction = [&](double beta) {
    return b.Subtract(b.ConstantScalar(dtype, 1), b.Power(b.ConstantScalar(dtype, beta), step));
  };
  Instruction* m_hat = b.Divide(m, spread(correction(config.beta1)));
  Instruction* v_hat = b.Divide(v, spread(correction(config.beta2)));
  Instruction* direction = b.Divide(m_hat, b.Add(b.Sqrt(v_hat), full(config.epsilon)));
  if (config.kind == OptimizerKind::kAdamW && config.weight_decay != 0) {
    direction = b.Add(direction, b.Multiply(full(config.weight_decay), p));
  }
  return {b.Subtract(p, b.Multiply(full(config.learning_rate), direction)), {m, v}};
}

}  // namespace alpa::autodiff
