#include "autodiff/optimizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

namespace {

struct NamedOptimizer {
  std::string_view name;
  OptimizerKind kind;
};
constexpr NamedOptimizer kOptimizerNames[] = {{"sgd", OptimizerKind::kSgd},
                                              {"adam", OptimizerKind::kAdam},
                                              {"adamw", OptimizerKind::kAdamW},
                                              {"adafactor", OptimizerKind::kAdafactor}};

}  // namespace

std::string_view OptimizerName(OptimizerKind kind) {
  for (const NamedOptimizer& named : kOptimizerNames) {
    if (named.kind == kind) return named.name;
  }
  return "?";
}

Result<OptimizerKind> ParseOptimizer(std::string_view text) {
  std::vector<std::string_view> names;
  for (const NamedOptimizer& named : kOptimizerNames) {
    if (text == named.name) return named.kind;
    names.push_back(named.name);
  }
  return InvalidArgument("{}: unknown optimizer; use one of {}", text, fmt::join(names, ", "));
}

using ir::Instruction;

namespace {

// Adafactor's factored dimensions (a, b): the second largest and the largest (the later one of
// equal sizes is "larger", as numpy's argsort orders them), when both are at least
// min_dim_size_to_factor (optax's _factored_dims).
std::optional<std::pair<int64_t, int64_t>> FactoredDims(const OptimizerConfig& config,
                                                        const std::vector<int64_t>& dims) {
  if (dims.size() < 2) return std::nullopt;
  std::vector<int64_t> order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return dims[x] < dims[y]; });
  const int64_t a = order[order.size() - 2], b = order.back();
  if (dims[a] < config.min_dim_size_to_factor) return std::nullopt;
  return std::make_pair(a, b);
}

std::vector<int64_t> Without(std::vector<int64_t> values, int64_t index) {
  values.erase(values.begin() + index);
  return values;
}

// 0, 1, ..., rank - 1 without `skipped`: where an array missing dimension `skipped` broadcasts.
std::vector<int64_t> AllDimsBut(int64_t rank, int64_t skipped) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != skipped) dims.push_back(d);
  }
  return dims;
}

Instruction* MeanOver(ir::ComputationBuilder& b, Instruction* x, int64_t dimension) {
  Instruction* sum = SumOver(b, x, {dimension});
  return b.Divide(sum, Full(b, sum, static_cast<double>(x->shape().dim(dimension))));
}

// sqrt(mean(x^2)) over every element, a scalar.
Instruction* Rms(ir::ComputationBuilder& b, Instruction* x) {
  std::vector<int64_t> all(static_cast<size_t>(x->shape().rank()));
  std::iota(all.begin(), all.end(), 0);
  Instruction* sum = SumOver(b, b.Multiply(x, x), all);
  return b.Sqrt(b.Divide(
      sum, b.ConstantScalar(x->shape().dtype(), static_cast<double>(x->shape().ElementCount()))));
}

ParameterUpdate EmitAdafactor(const OptimizerConfig& config, Instruction* p, Instruction* g,
                              const std::vector<Instruction*>& state, Instruction* step,
                              ir::ComputationBuilder& b) {
  const ir::DType dtype = p->shape().dtype();
  const std::vector<int64_t>& dims = p->shape().dims();
  const int64_t rank = p->shape().rank();
  auto scalar = [&](double value) { return b.ConstantScalar(dtype, value); };
  auto spread = [&](Instruction* value, const Instruction* like) {
    return b.Broadcast(value, like->shape().dims(), {});
  };
  Instruction* beta = b.Subtract(scalar(1), b.Power(step, scalar(-config.decay_rate)));
  Instruction* one_minus_beta = b.Subtract(scalar(1), beta);
  auto decay = [&](Instruction* old, Instruction* fresh) {
    return b.Add(b.Multiply(spread(beta, old), old),
                 b.Multiply(spread(one_minus_beta, fresh), fresh));
  };
  Instruction* squared = b.Add(b.Multiply(g, g), Full(b, g, 1e-30));
  Instruction* direction = nullptr;
  std::vector<Instruction*> new_state;
  if (const auto factored = FactoredDims(config, dims)) {
    const auto [a, largest] = *factored;
    Instruction* row = decay(state[0], MeanOver(b, squared, largest));
    Instruction* col = decay(state[1], MeanOver(b, squared, a));
    const int64_t a_in_row = a > largest ? a - 1 : a;
    Instruction* row_mean = b.Broadcast(MeanOver(b, row, a_in_row), row->shape().dims(),
                                        AllDimsBut(rank - 1, a_in_row));
    Instruction* row_factor = b.Rsqrt(b.Divide(row, row_mean));
    Instruction* col_factor = b.Rsqrt(col);
    direction = b.Multiply(b.Multiply(g, b.Broadcast(row_factor, dims, AllDimsBut(rank, largest))),
                           b.Broadcast(col_factor, dims, AllDimsBut(rank, a)));
    new_state = {row, col};
  } else {
    Instruction* v = decay(state[0], squared);
    direction = b.Multiply(g, b.Rsqrt(v));
    new_state = {v};
  }
  Instruction* clip =
      b.Maximum(scalar(1), b.Divide(Rms(b, direction), scalar(config.clipping_threshold)));
  direction = b.Divide(direction, spread(clip, direction));
  Instruction* step_size =
      b.Multiply(scalar(config.learning_rate), b.Maximum(Rms(b, p), scalar(1e-3)));
  return {b.Subtract(p, b.Multiply(spread(step_size, p), direction)), std::move(new_state)};
}

}  // namespace

std::vector<StateArray> OptimizerState(const OptimizerConfig& config,
                                       const std::vector<int64_t>& dims) {
  switch (config.kind) {
    case OptimizerKind::kSgd:
      if (config.momentum == 0) return {};
      return {{"velocity", dims}};
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return {{"m", dims}, {"v", dims}};
    case OptimizerKind::kAdafactor:
      if (const auto factored = FactoredDims(config, dims)) {
        return {{"v_row", Without(dims, factored->second)},
                {"v_col", Without(dims, factored->first)}};
      }
      return {{"v", dims}};
  }
  return {};
}

ParameterUpdate EmitParameterUpdate(const OptimizerConfig& config, Instruction* p, Instruction* g,
                                    const std::vector<Instruction*>& state, Instruction* step,
                                    ir::ComputationBuilder& b) {
  if (config.kind == OptimizerKind::kAdafactor) {
    return EmitAdafactor(config, p, g, state, step, b);
  }
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
