// Adafactor's update (autodiff/optimizer.h) against a plain C++ transcription of optax's
// scale_by_factored_rms, clip_by_block_rms and scale_by_param_block_rms, on factored and
// unfactored parameters, at the first step (beta_t = 0) and a later one with carried state.
#include "autodiff/optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "interp/evaluator.h"
#include "ir/literal.h"

namespace alpa::autodiff {
namespace {

using ir::DType;
using ir::Instruction;
using ir::Literal;

ir::Shape F64(std::vector<int64_t> dims) { return ir::Shape::Array(DType::kF64, std::move(dims)); }

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetDouble(i));
  return values;
}

// Deterministic values in [-1, 1] (or (0, 1] with `positive`), different per seed.
std::vector<double> Values(int64_t count, int seed, bool positive = false) {
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i) {
    const double x = std::sin(1.7 * static_cast<double>(i + 1) + 0.9 * seed);
    values.push_back(positive ? 0.05 + std::abs(x) : x);
  }
  return values;
}

double Rms(const std::vector<double>& x) {
  double sum = 0;
  for (double v : x) sum += v * v;
  return std::sqrt(sum / static_cast<double>(x.size()));
}

struct Update {
  std::vector<double> parameter;
  std::vector<std::vector<double>> state;
};

// optax.adafactor's step on a [rows, cols] parameter (row-major) whose second largest dimension
// is `a` (0 or 1) and largest the other; `state` is {v_row over dim a, v_col over the largest}.
Update ReferenceFactored(const OptimizerConfig& config, int64_t rows, int64_t cols, int a,
                         const std::vector<double>& p, const std::vector<double>& g,
                         const std::vector<std::vector<double>>& state, double t) {
  const double beta = 1 - std::pow(t, -config.decay_rate);
  const int64_t a_size = a == 0 ? rows : cols, b_size = a == 0 ? cols : rows;
  auto at = [&](const std::vector<double>& x, int64_t i_a, int64_t i_b) {
    return a == 0 ? x[static_cast<size_t>(i_a * cols + i_b)]
                  : x[static_cast<size_t>(i_b * cols + i_a)];
  };
  std::vector<double> row(static_cast<size_t>(a_size)), col(static_cast<size_t>(b_size));
  for (int64_t i = 0; i < a_size; ++i) {
    double mean = 0;
    for (int64_t j = 0; j < b_size; ++j) mean += at(g, i, j) * at(g, i, j) + 1e-30;
    row[i] = beta * state[0][i] + (1 - beta) * mean / static_cast<double>(b_size);
  }
  for (int64_t j = 0; j < b_size; ++j) {
    double mean = 0;
    for (int64_t i = 0; i < a_size; ++i) mean += at(g, i, j) * at(g, i, j) + 1e-30;
    col[j] = beta * state[1][j] + (1 - beta) * mean / static_cast<double>(a_size);
  }
  const double row_mean =
      std::accumulate(row.begin(), row.end(), 0.0) / static_cast<double>(a_size);
  std::vector<double> u(p.size());
  for (int64_t i = 0; i < a_size; ++i) {
    for (int64_t j = 0; j < b_size; ++j) {
      const size_t k = static_cast<size_t>(a == 0 ? i * cols + j : j * cols + i);
      u[k] = g[k] / std::sqrt(row[i] / row_mean) / std::sqrt(col[j]);
    }
  }
  const double clip = std::max(1.0, Rms(u) / config.clipping_threshold);
  const double scale = config.learning_rate * std::max(Rms(p), 1e-3);
  Update update{p, {row, col}};
  for (size_t k = 0; k < p.size(); ++k) update.parameter[k] -= scale * u[k] / clip;
  return update;
}

Update ReferenceUnfactored(const OptimizerConfig& config, const std::vector<double>& p,
                           const std::vector<double>& g, const std::vector<double>& v_old,
                           double t) {
  const double beta = 1 - std::pow(t, -config.decay_rate);
  std::vector<double> v(p.size()), u(p.size());
  for (size_t k = 0; k < p.size(); ++k) {
    v[k] = beta * v_old[k] + (1 - beta) * (g[k] * g[k] + 1e-30);
    u[k] = g[k] / std::sqrt(v[k]);
  }
  const double clip = std::max(1.0, Rms(u) / config.clipping_threshold);
  const double scale = config.learning_rate * std::max(Rms(p), 1e-3);
  Update update{p, {v}};
  for (size_t k = 0; k < p.size(); ++k) update.parameter[k] -= scale * u[k] / clip;
  return update;
}

// EmitParameterUpdate on (p, g, state..., t) run by the interpreter.
Update Emitted(const OptimizerConfig& config, const std::vector<int64_t>& dims,
               const std::vector<double>& p, const std::vector<double>& g,
               const std::vector<std::vector<double>>& state, double t) {
  const std::vector<StateArray> arrays = OptimizerState(config, dims);
  EXPECT_EQ(arrays.size(), state.size());
  ir::ModuleBuilder mb("adafactor");
  ir::ComputationBuilder b = mb.NewComputation("update");
  Instruction* parameter = b.Parameter(0, F64(dims), "p");
  Instruction* gradient = b.Parameter(1, F64(dims), "g");
  std::vector<Instruction*> old_state;
  std::vector<Literal> arguments = {Literal::FromDoubles(F64(dims), p),
                                    Literal::FromDoubles(F64(dims), g)};
  for (size_t i = 0; i < arrays.size(); ++i) {
    old_state.push_back(b.Parameter(static_cast<int64_t>(i) + 2, F64(arrays[i].dims)));
    arguments.push_back(Literal::FromDoubles(F64(arrays[i].dims), state[i]));
  }
  Instruction* step = b.Parameter(static_cast<int64_t>(arrays.size()) + 2, F64({}), "t");
  arguments.push_back(Literal::Scalar(DType::kF64, t));
  ParameterUpdate update = EmitParameterUpdate(config, parameter, gradient, old_state, step, b);
  std::vector<Instruction*> results = {update.parameter};
  results.insert(results.end(), update.state.begin(), update.state.end());
  Result<ir::Computation*> entry = b.Build(b.Tuple(results));
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  Result<Literal> result = interp::EvaluateModule(**module, std::move(arguments));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  Update emitted;
  emitted.parameter = Doubles(result->tuple_element(0));
  for (size_t i = 0; i < arrays.size(); ++i) {
    emitted.state.push_back(Doubles(result->tuple_element(static_cast<int64_t>(i) + 1)));
  }
  return emitted;
}

void ExpectSameUpdate(const Update& emitted, const Update& reference) {
  using ::testing::DoubleNear;
  using ::testing::Pointwise;
  EXPECT_THAT(emitted.parameter, Pointwise(DoubleNear(1e-12), reference.parameter));
  ASSERT_EQ(emitted.state.size(), reference.state.size());
  for (size_t i = 0; i < reference.state.size(); ++i) {
    EXPECT_THAT(emitted.state[i], Pointwise(DoubleNear(1e-12), reference.state[i]));
  }
}

OptimizerConfig Adafactor() {
  // A small factoring threshold so that small test parameters factor; clipping active.
  return {.kind = OptimizerKind::kAdafactor,
          .learning_rate = 0.1,
          .clipping_threshold = 0.5,
          .min_dim_size_to_factor = 3};
}

TEST(AdafactorTest, StateIsFactoredOverTheTwoLargestDimensions) {
  const OptimizerConfig config = Adafactor();
  const auto dims_of = [&](const std::vector<int64_t>& dims) {
    std::vector<std::vector<int64_t>> shapes;
    for (const StateArray& array : OptimizerState(config, dims)) shapes.push_back(array.dims);
    return shapes;
  };
  using Shapes = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(dims_of({3, 4}), (Shapes{{3}, {4}}));  // v_row drops the largest, v_col the other
  EXPECT_EQ(dims_of({4, 3}), (Shapes{{3}, {4}}));
  EXPECT_EQ(dims_of({2, 5, 4}), (Shapes{{2, 4}, {2, 5}}));
  EXPECT_EQ(dims_of({5, 5}), (Shapes{{5}, {5}}));  // equal sizes: the later one is the largest
  EXPECT_EQ(dims_of({2, 8}), (Shapes{{2, 8}}));    // 2 < 3: not factored
  EXPECT_EQ(dims_of({8}), (Shapes{{8}}));
  EXPECT_EQ(OptimizerState(config, {1024, 4096}).front().name, "v_row");
}

TEST(AdafactorTest, FactoredUpdateMatchesOptax) {
  const OptimizerConfig config = Adafactor();
  for (const auto& [rows, cols, a] : {std::tuple{3, 4, 0}, std::tuple{4, 3, 1}}) {
    SCOPED_TRACE(::testing::Message() << rows << "x" << cols);
    const std::vector<double> p = Values(rows * cols, 1), g = Values(rows * cols, 2);
    const int64_t a_size = a == 0 ? rows : cols, b_size = a == 0 ? cols : rows;
    // The first step (beta_t = 0: the state is the fresh statistics) and a later one.
    const std::vector<std::vector<double>> zero = {std::vector<double>(a_size, 0),
                                                   std::vector<double>(b_size, 0)};
    ExpectSameUpdate(Emitted(config, {rows, cols}, p, g, zero, 1),
                     ReferenceFactored(config, rows, cols, a, p, g, zero, 1));
    const std::vector<std::vector<double>> carried = {Values(a_size, 3, true),
                                                      Values(b_size, 4, true)};
    ExpectSameUpdate(Emitted(config, {rows, cols}, p, g, carried, 7),
                     ReferenceFactored(config, rows, cols, a, p, g, carried, 7));
  }
}

TEST(AdafactorTest, UnfactoredUpdateMatchesOptax) {
  const OptimizerConfig config = Adafactor();
  const std::vector<double> p = Values(5, 5), g = Values(5, 6), v = Values(5, 7, true);
  ExpectSameUpdate(Emitted(config, {5}, p, g, {v}, 3), ReferenceUnfactored(config, p, g, v, 3));
  // A parameter of zeros moves by lr * 1e-3 per unit of the clipped direction, not by 0.
  const std::vector<double> zeros(5, 0.0);
  ExpectSameUpdate(Emitted(config, {5}, zeros, g, {v}, 3),
                   ReferenceUnfactored(config, zeros, g, v, 3));
}

}  // namespace
}  // namespace alpa::autodiff
