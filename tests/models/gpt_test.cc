#include "models/gpt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../autodiff/training_loop.h"
#include "autodiff/grad.h"
#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "model_gradient_check.h"
#include "model_inputs.h"
#include "models/init.h"

namespace alpa::models {
namespace {

using testing::WeightCount;

using ::testing::HasSubstr;

// Alpa's compute_gpt_parameter_count.
int64_t AlpaFormula(const GptConfig& c) {
  const int64_t h = c.hidden;
  return c.layers * (h * (3 * h + 1) + h * (h + 1) + h * (4 * h + 1) + 4 * h * (h + 1) + 4 * h) +
         c.vocab * (h + 1);
}

// The formula plus what it leaves out (see gpt.h): the position embedding S*H, and 2H per layer
// because it counts the fused qkv bias as H where it is 3H.
int64_t ExpectedParameterCount(const GptConfig& c) {
  return AlpaFormula(c) + c.seq * c.hidden + 2 * c.hidden * c.layers;
}

// The weights from the model's own initialisation and one synthetic batch of config.batch rows.
std::vector<ir::Literal> WeightsAndBatch(const Model& model, const GptConfig& config) {
  std::vector<ir::Literal> arguments = InitialWeights(model, /*seed=*/1);
  for (ir::Literal& data : model.batch(config.batch, /*seed=*/2)) {
    arguments.push_back(std::move(data));
  }
  return arguments;
}

TEST(GptTest, ParameterCountIsAlpasFormulaPlusWhatItOmits) {
  for (const GptConfig& config :
       {GptConfig{},
        GptConfig{.batch = 2, .seq = 16, .hidden = 24, .layers = 3, .heads = 3, .vocab = 50}}) {
    Result<Model> model = BuildGpt(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(WeightCount(*model), ExpectedParameterCount(config));
    const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
    const size_t n = 3 + 12 * static_cast<size_t>(config.layers);
    ASSERT_EQ(model->weights.size(), n);
    ASSERT_EQ(parameters.size(), n + 2);
    EXPECT_EQ(parameters[0]->name(), "wte");
    EXPECT_EQ(parameters[n]->name(), "tokens");
    EXPECT_EQ(parameters[n + 1]->name(), "labels");
    EXPECT_EQ(parameters[n + 1]->shape().dtype(), ir::DType::kS32);
  }
  // Tiny by hand: 2 (16*49 + 16*17 + 16*65 + 64*17 + 64) + 32*17 = 2*3248 + 544 = 7040 by the
  // formula; the model has 7040 + 8*16 + 2*2*16 = 7232: per layer qkv 16*48 + 48, attention out
  // 16*16 + 16, LayerNorms 4*16, fc1 16*64 + 64, fc2 64*16 + 16 = 3280; plus wte 512, wpe 128,
  // lm_bias 32.
  EXPECT_EQ(AlpaFormula({}), 7040);
  EXPECT_EQ(2 * 3280 + 512 + 128 + 32, 7232);
  EXPECT_EQ(ExpectedParameterCount({}), 7232);
}

TEST(GptTest, LossAtInitIsNearLogVocab) {
  const GptConfig config;
  Result<Model> model = BuildGpt(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<ir::Literal> loss = interp::EvaluateModule(*model->loss, WeightsAndBatch(*model, config));
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  const double expected = std::log(static_cast<double>(config.vocab));
  EXPECT_NEAR(loss->GetDouble(0), expected, 0.2 * expected);
}

// The cross-entropy's log of the sum over the vocabulary is taken per position, [B, S], as
// jax.nn.log_softmax does, not on its broadcast to [B, S, V] (V times the work, and a value too
// expensive to fuse).
TEST(GptTest, LogSoftmaxTakesTheLogPerPosition) {
  const GptConfig config;
  Result<Model> model = BuildGpt(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  int64_t logs = 0;
  for (const ir::Instruction* instruction : model->loss->entry()->MakePostOrder()) {
    if (instruction->opcode() != ir::Opcode::kLog) continue;
    ++logs;
    EXPECT_EQ(instruction->shape().dims(), (std::vector<int64_t>{config.batch, config.seq}));
  }
  EXPECT_EQ(logs, 1);
}

// The gradient of the whole model (every rule it uses: gather, dots with batch dims, the masked
// softmax, LayerNorm, gelu, the one-hot cross-entropy) against central differences in f64, at
// a few elements of every weight; the GPT and BERT's unmasked encoder.
TEST(GptTest, GradientMatchesFiniteDifferences) {
  for (bool causal : {true, false}) {
    const GptConfig config{.batch = 2,
                           .seq = 4,
                           .hidden = 8,
                           .layers = 1,
                           .heads = 2,
                           .vocab = 8,
                           .dtype = ir::DType::kF64,
                           .causal = causal};
    Result<Model> model = BuildGpt(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    // Larger weights than at init (x 10) so that attention and gelu are away from linear.
    std::vector<ir::Literal> inputs = WeightsAndBatch(*model, config);
    for (size_t k = 0; k < model->weights.size(); ++k) {
      ir::Literal& w = inputs[k];
      for (int64_t i = 0; i < w.element_count(); ++i) w.SetDouble(i, w.GetDouble(i) * 10);
    }
    SCOPED_TRACE(causal ? "gpt" : "bert");
    testing::ExpectModelGradientMatchesFiniteDifferences(*model, inputs);
  }
}

// gpt-tiny learns the next token of a progression with Adam: the loss falls below 70% of the
// first step's in 30 steps.
TEST(GptTest, TrainingLowersTheLoss) {
  const GptConfig config{.batch = 4, .seq = 8, .hidden = 16, .layers = 2, .heads = 2, .vocab = 32};
  Result<Model> model = BuildGpt(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const autodiff::OptimizerConfig adam = {.kind = autodiff::OptimizerKind::kAdam,
                                          .learning_rate = 0.01};
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model->loss, model->weights, {.optimizer = adam});
  ASSERT_TRUE(step.ok()) << step.status().ToString();

  autodiff::testing::Training training =
      autodiff::testing::StartTraining(InitialWeights(*model, /*seed=*/1), adam);
  const std::vector<double> losses =
      autodiff::testing::RunSteps(**step, training, model->batch(config.batch, /*seed=*/2), 30);
  ASSERT_EQ(losses.size(), 30u);
  for (double value : losses) ASSERT_TRUE(std::isfinite(value));
  const double first_loss = losses.front(), loss = losses.back();
  EXPECT_LT(loss, 0.7 * first_loss) << "first loss " << first_loss;
  RecordProperty("first_loss", std::to_string(first_loss));
  RecordProperty("last_loss", std::to_string(loss));
}

TEST(GptTest, BadConfigsNameTheField) {
  EXPECT_THAT(BuildGpt({.hidden = 0}).status().message(), HasSubstr("gpt: hidden is 0"));
  EXPECT_THAT(BuildGpt({.layers = 0}).status().message(), HasSubstr("gpt: layers is 0"));
  EXPECT_THAT(BuildGpt({.vocab = -1}).status().message(), HasSubstr("gpt: vocab is -1"));
  EXPECT_THAT(BuildGpt({.hidden = 16, .heads = 3}).status().message(),
              HasSubstr("gpt: heads is 3; it must divide hidden (16)"));
  EXPECT_THAT(BuildGpt({.dtype = ir::DType::kS32}).status().message(),
              HasSubstr("dtype s32 is not a float type"));
}

}  // namespace
}  // namespace alpa::models
