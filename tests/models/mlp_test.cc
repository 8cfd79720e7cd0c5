#include "models/mlp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "../autodiff/training_loop.h"
#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "model_gradient_check.h"
#include "models/init.h"

namespace alpa::models {
namespace {

using ::testing::HasSubstr;

TEST(MlpTest, WeightsAreTheDenseLayers) {
  // 16 -> 32 -> 32 -> 4: (16*32 + 32) + (32*32 + 32) + (32*4 + 4) = 544 + 1056 + 132 = 1732.
  Result<Model> model = BuildMlp({});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
  ASSERT_EQ(model->weights, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  int64_t count = 0;
  for (int64_t w : model->weights) count += parameters[w]->shape().ElementCount();
  EXPECT_EQ(count, 1732);
  EXPECT_EQ(parameters[6]->name(), "x");
  EXPECT_EQ(parameters[7]->name(), "y");
}

// ReLU kinks: the seeded inputs put no pre-activation within a step of 1e-6 of zero.
TEST(MlpTest, GradientMatchesFiniteDifferences) {
  const MlpConfig config{
      .batch = 4, .input = 3, .hidden = 5, .layers = 2, .output = 2, .dtype = ir::DType::kF64};
  Result<Model> model = BuildMlp(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<ir::Literal> inputs = InitialWeights(*model, /*seed=*/1);
  for (ir::Literal& data : model->batch(config.batch, /*seed=*/2)) inputs.push_back(data);
  testing::ExpectModelGradientMatchesFiniteDifferences(*model, inputs);
}

// Fits a linear teacher y = x A on one batch with Adam; the loss must fall to under a tenth.
TEST(MlpTest, TrainingFitsALinearTeacher) {
  const MlpConfig config;
  Result<Model> model = BuildMlp(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const autodiff::OptimizerConfig adam = {.kind = autodiff::OptimizerKind::kAdam,
                                          .learning_rate = 0.01};
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model->loss, model->weights, {.optimizer = adam});
  ASSERT_TRUE(step.ok()) << step.status().ToString();

  // Weights uniform in [-1, 1) / sqrt(fan in), biases zero.
  const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
  std::vector<ir::Literal> weights;
  for (int64_t w : model->weights) {
    const ir::Shape& shape = parameters[w]->shape();
    ir::Literal value = ir::Literal::CreateZeros(shape);
    if (shape.rank() == 2) {
      value = interp::RandomLiteral(shape, static_cast<uint64_t>(w));
      for (int64_t i = 0; i < value.element_count(); ++i) {
        value.SetDouble(i, value.GetDouble(i) / std::sqrt(static_cast<double>(shape.dim(0))));
      }
    }
    weights.push_back(std::move(value));
  }
  const ir::Shape x_shape = parameters[6]->shape(), y_shape = parameters[7]->shape();
  const ir::Literal x = interp::RandomLiteral(x_shape, 100);
  const ir::Literal teacher =
      interp::RandomLiteral(ir::Shape::Array(ir::DType::kF32, {config.input, config.output}), 101);
  ir::Literal y = ir::Literal::CreateZeros(y_shape);
  for (int64_t r = 0; r < config.batch; ++r) {
    for (int64_t c = 0; c < config.output; ++c) {
      double sum = 0;
      for (int64_t k = 0; k < config.input; ++k) {
        sum += x.GetDouble(r * config.input + k) * teacher.GetDouble(k * config.output + c);
      }
      y.SetDouble(r * config.output + c, sum);
    }
  }

  autodiff::testing::Training training = autodiff::testing::StartTraining(std::move(weights), adam);
  const std::vector<double> losses = autodiff::testing::RunSteps(**step, training, {x, y}, 100);
  ASSERT_EQ(losses.size(), 100u);
  EXPECT_GT(losses.front(), 0.1);
  EXPECT_LT(losses.back(), 0.1 * losses.front()) << "first loss " << losses.front();
}

TEST(MlpTest, BadConfigsNameTheField) {
  EXPECT_THAT(BuildMlp({.hidden = 0}).status().message(), HasSubstr("mlp: hidden is 0"));
  EXPECT_THAT(BuildMlp({.layers = -1}).status().message(), HasSubstr("mlp: layers is -1"));
  EXPECT_THAT(BuildMlp({.dtype = ir::DType::kS32}).status().message(),
              HasSubstr("dtype s32 is not a float type"));
}

}  // namespace
}  // namespace alpa::models
