// GPT train steps at Alpa's benchmark sizes (built as graphs only) and the train-step options on
// a small GPT: FLOPs against Alpa's formula, parameter counts of the named sizes, remat, mixed
// precision, micro-batches and layer boundaries through autodiff.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "autodiff/train_step.h"
#include "cost/flop_count.h"
#include "interp/evaluator.h"
#include "ir/layer_boundary.h"
#include "model_inputs.h"
#include "models/gpt.h"
#include "models/init.h"
#include "models/zoo.h"

namespace alpa::models {
namespace {

using testing::WeightCount;

const char* const kNamedGpts[] = {"gpt-125m", "gpt-350m", "gpt-760m", "gpt-1.3b", "gpt-2.6b",
                                  "gpt-6.7b", "gpt-15b",  "gpt-39b",  "gpt-76b"};

struct Dims {
  double b, s, h, l, v;
};

Dims DimsOf(const Model& model) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  const ir::Shape& wte = parameters[0]->shape();            // [V, H]
  const ir::Shape& tokens = parameters.end()[-2]->shape();  // [B, S]
  const double layers = static_cast<double>(model.weights.size() - 3) / 12;
  return {static_cast<double>(tokens.dim(0)), static_cast<double>(tokens.dim(1)),
          static_cast<double>(wte.dim(1)), layers, static_cast<double>(wte.dim(0))};
}

// Alpa's GPT FLOPs per training step (benchmark/alpa/util.py): factor 24 forward + 48 backward
// (+ 24 recomputing the forward with remat), times B S H^2 L (1 + S / 6H), plus 6 B S H V for the
// LM head's forward and backward.
double AlpaGptFlops(const Dims& d, bool remat) {
  const double factor = remat ? 96 : 72;
  return factor * d.b * d.s * d.h * d.h * d.l * (1 + d.s / (6 * d.h)) + 6 * d.b * d.s * d.h * d.v;
}

// Our FLOP counter on the built train step, dot and convolution only (what Alpa's formula and
// its TFLOPS figures count), against the formula: the issue allows 3%; the graph does exactly
// the formula's matmuls, so the match is closer.
TEST(GptTrainStepTest, DotFlopsOfNamedSizesMatchAlpasFormula) {
  for (const char* name : kNamedGpts) {
    for (bool remat : {false, true}) {
      Result<ZooModel> gpt = BuildZooModel(name);
      ASSERT_TRUE(gpt.ok()) << gpt.status().ToString();
      autodiff::TrainStepOptions options = gpt->training;
      options.remat = remat;
      Result<std::unique_ptr<ir::Module>> step =
          autodiff::BuildTrainStep(*gpt->model.loss, gpt->model.weights, options);
      ASSERT_TRUE(step.ok()) << step.status().ToString();
      Result<cost::FlopCount> flops = cost::CountFlops(*(*step)->entry());
      ASSERT_TRUE(flops.ok()) << flops.status().ToString();
      const double dot_flops = flops->by_opcode[ir::Opcode::kDot];
      const double expected = AlpaGptFlops(DimsOf(gpt->model), remat);
      EXPECT_NEAR(dot_flops / expected, 1.0, 1e-9)
          << name << (remat ? " with" : " without") << " remat";
    }
  }
}

// Alpa's compute_gpt_parameter_count; our count adds what it omits (gpt.h): S H + 2 H L. Within
// 0.5% of the formula for every named size but gpt-125m, where the position embedding alone is
// 1024 x 768 = 0.63% of the formula (Alpa's own benchmark model has it too).
TEST(GptTrainStepTest, NamedSizesHaveAlpasParameterCount) {
  std::map<std::string, double> deviation;
  for (const char* name : kNamedGpts) {
    Result<ZooModel> gpt = BuildZooModel(name);
    ASSERT_TRUE(gpt.ok()) << gpt.status().ToString();
    const Dims d = DimsOf(gpt->model);
    const double formula = d.l * (12 * d.h * d.h + 11 * d.h) + d.v * (d.h + 1);
    const double count = static_cast<double>(WeightCount(gpt->model));
    EXPECT_EQ(count, formula + d.s * d.h + 2 * d.h * d.l) << name;
    deviation[name] = count / formula - 1;
  }
  EXPECT_NEAR(deviation["gpt-125m"], 0.0064, 0.0002);
  for (const auto& [name, value] : deviation) {
    if (name != "gpt-125m") {
      EXPECT_LT(value, 0.005) << name;
    }
  }
  EXPECT_NEAR(deviation["gpt-39b"], 0.0002, 0.0001);
}

// A small GPT in f64, so that the option pairs below agree to rounding.
constexpr GptConfig kSmall{.batch = 4,
                           .seq = 8,
                           .hidden = 16,
                           .layers = 3,
                           .heads = 2,
                           .vocab = 32,
                           .dtype = ir::DType::kF64};

const autodiff::OptimizerConfig kAdam = {.kind = autodiff::OptimizerKind::kAdam,
                                         .learning_rate = 0.01};

// One step from the model's initial weights, zero Adam state and t = 0, on a batch of `rows`.
ir::Literal OneStep(const Model& model, const autodiff::TrainStepOptions& options, int64_t rows) {
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model.loss, model.weights, options);
  EXPECT_TRUE(step.ok()) << step.status().ToString();
  if (!step.ok()) return ir::Literal();
  const std::vector<ir::Instruction*> parameters = (*step)->entry()->parameters();
  const ir::DType weight_type = model.loss->entry()->parameters()[0]->shape().dtype();
  std::vector<ir::Literal> arguments =
      InitialWeights(model, /*seed=*/1, autodiff::MasterWeightType(weight_type));
  const size_t weights = arguments.size();
  for (size_t i = weights; i < parameters.size() - 2; ++i) {
    const ir::Shape& shape = parameters[i]->shape();  // optimizer state and the step count t
    arguments.push_back(ir::Literal::CreateZeros(shape));
  }
  for (ir::Literal& data : model.batch(rows, /*seed=*/2)) arguments.push_back(std::move(data));
  Result<ir::Literal> result = interp::EvaluateModule(**step, std::move(arguments));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ir::Literal();
}

// Largest |a - b| / max(1, |b|) over all elements of two results of the same shape.
double MaxRelativeDifference(const ir::Literal& a, const ir::Literal& b) {
  if (a.shape().IsTuple()) {
    double worst = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(a.shape().tuple_shapes().size()); ++i) {
      worst = std::max(worst, MaxRelativeDifference(a.tuple_element(i), b.tuple_element(i)));
    }
    return worst;
  }
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = a.GetDouble(i), y = b.GetDouble(i);
    worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
  }
  return worst;
}

// Recomputing the activations changes where values come from, not what they are: the same
// operations on the same inputs give the same bits.
TEST(GptTrainStepTest, RematStepEqualsPlainStep) {
  Result<Model> model = BuildGpt(kSmall);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ir::Literal plain = OneStep(*model, {.optimizer = kAdam}, kSmall.batch);
  const ir::Literal remat = OneStep(*model, {.optimizer = kAdam, .remat = true}, kSmall.batch);
  EXPECT_EQ(MaxRelativeDifference(remat, plain), 0.0);
}

TEST(GptTrainStepTest, MicroBatchedStepEqualsUnsplitStep) {
  Result<Model> whole = BuildGpt(kSmall);
  GptConfig half = kSmall;
  half.batch = kSmall.batch / 2;
  Result<Model> micro = BuildGpt(half);
  ASSERT_TRUE(whole.ok() && micro.ok());
  const ir::Literal unsplit = OneStep(*whole, {.optimizer = kAdam}, kSmall.batch);
  const ir::Literal split =
      OneStep(*micro, {.optimizer = kAdam, .num_micro_batches = 2}, kSmall.batch);
  EXPECT_LT(MaxRelativeDifference(split, unsplit), 1e-12);
}

// f16 weights and activations on an f32 master copy: the step's weights and state are f32, and
// one step lands close to the f32 step (f16 keeps about 3 significant digits).
TEST(GptTrainStepTest, MixedPrecisionTrainsF32MasterWeights) {
  GptConfig f32 = kSmall;
  f32.dtype = ir::DType::kF32;
  GptConfig f16 = kSmall;
  f16.dtype = ir::DType::kF16;
  Result<Model> full = BuildGpt(f32);
  Result<Model> half = BuildGpt(f16);
  ASSERT_TRUE(full.ok() && half.ok());
  const autodiff::TrainStepOptions options{.optimizer = kAdam, .loss_scale = 1024};
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*half->loss, half->weights, options);
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  for (const ir::Instruction* parameter : (*step)->entry()->parameters()) {
    if (parameter->shape().dtype() != ir::DType::kS32) {
      EXPECT_EQ(parameter->shape().dtype(), ir::DType::kF32) << parameter->name();
    }
  }
  const ir::Literal reference = OneStep(*full, {.optimizer = kAdam}, kSmall.batch);
  const ir::Literal mixed = OneStep(*half, options, kSmall.batch);
  ASSERT_EQ(mixed.shape().tuple_shapes().size(), reference.shape().tuple_shapes().size());
  EXPECT_NEAR(mixed.tuple_element(0).GetDouble(0), reference.tuple_element(0).GetDouble(0),
              1e-2 * reference.tuple_element(0).GetDouble(0));
  // Adam's first step moves each weight by lr times the sign of its gradient: where f16 rounding
  // flips the sign of a tiny gradient the new weights differ by 2 lr, and nowhere by more.
  EXPECT_LT(MaxRelativeDifference(mixed, reference), 2.1 * kAdam.learning_rate);
}

// Every forward layer boundary of the loss reaches the train step with a backward twin.
TEST(GptTrainStepTest, LayerBoundariesSurviveAutodiff) {
  Result<Model> model = BuildGpt(kSmall);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (bool remat : {false, true}) {
    Result<std::unique_ptr<ir::Module>> step = autodiff::BuildTrainStep(
        *model->loss, model->weights, {.optimizer = kAdam, .remat = remat});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    std::map<int64_t, int> forward, backward;
    for (const auto& instruction : (*step)->entry()->instructions()) {
      if (auto boundary = ir::AsLayerBoundary(*instruction)) {
        ++(boundary->backward ? backward : forward)[boundary->layer];
      }
    }
    // The embedding (layer 0) and each block (1..3) pass one value on.
    const std::map<int64_t, int> expected = {{0, 1}, {1, 1}, {2, 1}, {3, 1}};
    EXPECT_EQ(forward, expected);
    EXPECT_EQ(backward, expected);
  }
}

}  // namespace
}  // namespace alpa::models
