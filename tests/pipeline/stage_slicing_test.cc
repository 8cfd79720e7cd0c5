// Stage slicing: layers from markers, identical blocks slice to identical modules, and the
// stages' losses chain to the model's gradients (the backward pass of a two-stage split, run
// stage by stage through autodiff in the interpreter, equals the unsplit model's).
#include "pipeline/stage_slicing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "autodiff/train_step.h"
#include "hlo/printer.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "models/zoo.h"
#include "zoo_models.h"

namespace alpa::pipeline {
namespace {

using ::testing::HasSubstr;
using testing::Zoo;

StageLoss Slice(const models::ZooModel& zoo, int64_t first, int64_t last) {
  const ir::Module& loss = *zoo.model.loss;
  Result<StageLoss> stage =
      SliceStageLoss(loss, zoo.model.weights, LayersFromBoundaries(*loss.entry()), first, last);
  EXPECT_TRUE(stage.ok()) << stage.status().ToString();
  return std::move(stage).value();
}

TEST(StageSlicingTest, GptLayersAreEmbeddingBlocksAndHead) {
  const models::ZooModel gpt = Zoo("gpt-tiny");
  const ForwardLayers layers = LayersFromBoundaries(*gpt.model.loss->entry());
  // Markers 0 (embedding) .. L (after block L-1), then the head: L + 2 layers.
  EXPECT_EQ(layers.num_layers, 2 + 2);  // gpt-tiny has 2 blocks
  const StageLoss embedding = Slice(gpt, 0, 0);
  EXPECT_FALSE(embedding.has_loss);
  EXPECT_TRUE(embedding.activations.empty());
  EXPECT_EQ(embedding.cotangents.size(), 1u);
  const StageLoss head = Slice(gpt, 3, 3);
  EXPECT_TRUE(head.has_loss);
  EXPECT_TRUE(head.cotangents.empty());
  EXPECT_EQ(head.activations.size(), 1u);
  EXPECT_EQ(head.input_bytes, embedding.output_bytes);
}

TEST(StageSlicingTest, IdenticalBlocksSliceToIdenticalModules) {
  const models::ZooModel gpt = Zoo("gpt-tiny");
  const std::string block1 = hlo::PrintModule(*Slice(gpt, 1, 1).module);
  const std::string block2 = hlo::PrintModule(*Slice(gpt, 2, 2).module);
  EXPECT_EQ(block1, block2);
  EXPECT_NE(block1, hlo::PrintModule(*Slice(gpt, 1, 2).module));
  // The stage's train step builds, returning the gradient of its input activation.
  const StageLoss stage = Slice(gpt, 1, 1);
  EXPECT_TRUE(
      autodiff::BuildTrainStep(*stage.module, stage.weights, gpt.training, stage.activations).ok());
}

// Gradients of `stage` with respect to `wrt` at `arguments`: {loss, d/dwrt...}.
std::vector<ir::Literal> Gradients(const StageLoss& stage, const std::vector<int64_t>& wrt,
                                   std::vector<ir::Literal> arguments) {
  Result<std::unique_ptr<ir::Module>> grad = autodiff::Grad(*stage.module, wrt);
  EXPECT_TRUE(grad.ok()) << grad.status().ToString();
  Result<ir::Literal> result = interp::EvaluateModule(**grad, std::move(arguments));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).value().tuple_elements();
}

// Arguments for a stage: the model's where it reads them, `fill` for its own parameters.
std::vector<ir::Literal> StageArguments(const StageLoss& stage,
                                        const std::vector<ir::Literal>& model_arguments,
                                        const std::vector<ir::Literal>& own) {
  std::vector<ir::Literal> arguments;
  size_t next_own = 0;
  for (int64_t model : stage.model_parameter) {
    arguments.push_back(model >= 0 ? model_arguments[static_cast<size_t>(model)] : own[next_own++]);
  }
  return arguments;
}

TEST(StageSlicingTest, TwoStagesChainToTheModelsGradients) {
  const models::ZooModel mlp = Zoo("mlp-tiny");
  const ir::Module& loss = *mlp.model.loss;
  const ForwardLayers layers = LayersFromBoundaries(*loss.entry());
  ASSERT_GE(layers.num_layers, 3);
  const int64_t cut = layers.num_layers / 2;
  const std::vector<ir::Literal> inputs = interp::RandomArguments(*loss.entry(), /*seed=*/7);
  Result<std::unique_ptr<ir::Module>> full_grad = autodiff::Grad(loss, mlp.model.weights);
  ASSERT_TRUE(full_grad.ok());
  Result<ir::Literal> full = interp::EvaluateModule(**full_grad, inputs);
  ASSERT_TRUE(full.ok()) << full.status().ToString();

  const StageLoss a = Slice(mlp, 0, cut - 1);
  const StageLoss b = Slice(mlp, cut, layers.num_layers - 1);
  ASSERT_EQ(a.cotangents.size(), 1u);
  ASSERT_EQ(b.activations.size(), 1u);
  // Forward: y = d loss_a / d ct (loss_a = sum(y * ct)), read at ct = 0.
  const ir::Shape& y_shape = a.module->entry()->parameters()[a.cotangents[0]]->shape();
  const ir::Literal zeros = ir::Literal::CreateZeros(y_shape);
  const ir::Literal y = Gradients(a, a.cotangents, StageArguments(a, inputs, {zeros}))[1];
  // Backward of b: the model's loss, its weights' gradients and dloss/dy.
  std::vector<int64_t> b_wrt = b.weights;
  b_wrt.push_back(b.activations[0]);
  const std::vector<ir::Literal> b_grads = Gradients(b, b_wrt, StageArguments(b, inputs, {y}));
  EXPECT_NEAR(b_grads[0].GetDouble(0), full->tuple_element(0).GetDouble(0), 1e-5);
  // Backward of a with ct = dloss/dy.
  const std::vector<ir::Literal> a_grads =
      Gradients(a, a.weights, StageArguments(a, inputs, {b_grads.back()}));

  auto expect_gradient = [&](int64_t model_weight, const ir::Literal& got) {
    const auto& weights = mlp.model.weights;
    const size_t index = std::find(weights.begin(), weights.end(), model_weight) - weights.begin();
    const ir::Literal& want = full->tuple_element(1 + index);
    ASSERT_EQ(got.element_count(), want.element_count());
    for (int64_t i = 0; i < want.element_count(); ++i) {
      EXPECT_NEAR(got.GetDouble(i), want.GetDouble(i), 1e-5) << "weight " << model_weight;
    }
  };
  for (size_t i = 0; i < a.weights.size(); ++i) {
    expect_gradient(a.model_parameter[a.weights[i]], a_grads[1 + i]);
  }
  for (size_t i = 0; i < b.weights.size(); ++i) {
    expect_gradient(b.model_parameter[b.weights[i]], b_grads[1 + i]);
  }
  EXPECT_EQ(a.weights.size() + b.weights.size(), mlp.model.weights.size());
}

TEST(StageSlicingTest, BadRangesAreErrors) {
  const models::ZooModel mlp = Zoo("mlp-tiny");
  const ForwardLayers layers = LayersFromBoundaries(*mlp.model.loss->entry());
  Result<StageLoss> past =
      SliceStageLoss(*mlp.model.loss, mlp.model.weights, layers, 0, layers.num_layers);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("the loss has layers 0.."));
  EXPECT_FALSE(SliceStageLoss(*mlp.model.loss, mlp.model.weights, layers, 2, 1).ok());
}

}  // namespace
}  // namespace alpa::pipeline
