#include "models/mlp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"

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

// Fits a linear teacher y = x A on one batch with Adam; the loss must fall to under a tenth.
TEST(MlpTest, TrainingFitsALinearTeacher) {
  const MlpConfig config;
  Result<Model> model = BuildMlp(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model->loss, model->weights,
                               {.kind = autodiff::OptimizerKind::kAdam, .learning_rate = 0.01});
  ASSERT_TRUE(step.ok()) << step.status().ToString();

  // Weights uniform in [-1, 1) / sqrt(fan in), biases and Adam's state zero, t = 0.
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
  std::vector<ir::Literal> state;
  for (int64_t w : model->weights) {
    for (int slot = 0; slot < 2; ++slot)
      state.push_back(ir::Literal::CreateZeros(parameters[w]->shape()));
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

  ir::Literal t = ir::Literal::Scalar(ir::DType::kF32, 0);
  double first_loss = 0, loss = 0;
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::vector<ir::Literal> arguments = weights;
    arguments.insert(arguments.end(), state.begin(), state.end());
    arguments.push_back(t);
    arguments.push_back(x);
    arguments.push_back(y);
    Result<ir::Literal> result = interp::EvaluateModule(**step, std::move(arguments));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    loss = result->tuple_element(0).GetDouble(0);
    if (iteration == 0) first_loss = loss;
    for (size_t i = 0; i < weights.size(); ++i) {
      weights[i] = result->tuple_element(static_cast<int64_t>(1 + i));
    }
    for (size_t i = 0; i < state.size(); ++i) {
      state[i] = result->tuple_element(static_cast<int64_t>(1 + weights.size() + i));
    }
    t = result->tuple_element(static_cast<int64_t>(1 + weights.size() + state.size()));
  }
  EXPECT_GT(first_loss, 0.1);
  EXPECT_LT(loss, 0.1 * first_loss) << "first loss " << first_loss;
}

TEST(MlpTest, BadConfigsNameTheField) {
  EXPECT_THAT(BuildMlp({.hidden = 0}).status().message(), HasSubstr("mlp: hidden is 0"));
  EXPECT_THAT(BuildMlp({.layers = -1}).status().message(), HasSubstr("mlp: layers is -1"));
  EXPECT_THAT(BuildMlp({.dtype = ir::DType::kS32}).status().message(),
              HasSubstr("dtype s32 is not a float type"));
}

}  // namespace
}  // namespace alpa::models
