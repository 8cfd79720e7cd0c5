#include "models/wresnet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/grad.h"
#include "interp/evaluator.h"
#include "ir/layer_boundary.h"
#include "model_gradient_check.h"
#include "models/init.h"
#include "models/zoo.h"
#include "zoo_training.h"

namespace alpa::models {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> Stages(int64_t layers) {
  switch (layers) {
    case 14:
      return {1, 1, 1, 1};
    case 26:
      return {2, 2, 2, 2};
    case 50:
      return {3, 4, 6, 3};
    default:
      return {3, 4, 23, 3};  // 101
  }
}

// Weights by formula: the stem (7x7x3xC kernel, BN 2C); per block with filters f reading `in`
// channels, conv1 in f + bn1 2f, conv2 9 f (W f) + bn2 2 W f, conv3 (W f) 4f + bn3 8f, and in a
// stage's first block the projection in 4f + 8f; the head 4·8C·classes + classes.
int64_t ExpectedParameterCount(const WResNetConfig& c) {
  const int64_t w = c.width_factor;
  int64_t count = 7 * 7 * 3 * c.channels + 2 * c.channels;
  int64_t in = c.channels;
  const std::vector<int64_t> stages = Stages(c.layers);
  for (size_t i = 0; i < stages.size(); ++i) {
    const int64_t f = c.channels << i;
    for (int64_t j = 0; j < stages[i]; ++j) {
      count += in * f + 2 * f + 9 * f * w * f + 2 * w * f + w * f * 4 * f + 8 * f;
      if (j == 0) count += in * 4 * f + 8 * f;
      in = 4 * f;
    }
  }
  return count + in * c.classes + c.classes;
}

int64_t WeightCount(const Model& model) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  int64_t count = 0;
  for (int64_t w : model.weights) count += parameters[w]->shape().ElementCount();
  return count;
}

TEST(WResNetTest, ParameterCountIsTheBlockFormula) {
  for (const WResNetConfig& config :
       {WResNetConfig{}, WResNetConfig{.image = 16, .layers = 14, .channels = 8, .width_factor = 2},
        WResNetConfig{.image = 23, .layers = 26, .channels = 3, .width_factor = 5, .classes = 7},
        WResNetConfig{.image = 20, .layers = 101, .channels = 2, .width_factor = 1}}) {
    Result<Model> model = BuildWResNet(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(WeightCount(*model), ExpectedParameterCount(config)) << config.layers;
    const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
    ASSERT_EQ(parameters.size(), model->weights.size() + 2);
    EXPECT_EQ(parameters[0]->name(), "stem.conv");
    EXPECT_EQ(parameters[model->weights.size()]->name(), "images");
    EXPECT_EQ(parameters.back()->name(), "labels");
    EXPECT_EQ(parameters.back()->shape().dtype(), ir::DType::kS32);
  }
  // wresnet-tiny by hand (C 8, W 2, 10 classes): stem 7·7·3·8 + 2·8 = 1192. Stage 0's block
  // (f 8 reading f) is f² + 2f + 18f² + 4f + 8f² + 8f + 4f² + 8f = 31f² + 22f = 2160; the first
  // block of stages 1..3 reads 2f, which makes it 36f² + 22f: 9568, 37568, 148864 for f 16, 32,
  // 64. Head 256·10 + 10 = 2570. Total 201922.
  EXPECT_EQ(1192 + 2160 + 9568 + 37568 + 148864 + 2570, 201922);
  EXPECT_EQ(ExpectedParameterCount({.layers = 14, .channels = 8, .width_factor = 2}), 201922);
}

// The zoo's names count Alpa's reading of the width factor (the 3x3 convolution's output) to
// within 3%: the largest gap is 13B's -2.8% (wresnet.h has the table). torchvision's reading
// would be 65% over at W 2 and 11x at W 16.
TEST(WResNetTest, NamedSizesMatchTheirNames) {
  const std::vector<std::pair<std::string, double>> names = {
      {"wresnet-250m", 250e6}, {"wresnet-500m", 500e6}, {"wresnet-1b", 1e9},  {"wresnet-2b", 2e9},
      {"wresnet-4b", 4e9},     {"wresnet-6.8b", 6.8e9}, {"wresnet-13b", 13e9}};
  for (const auto& [name, figure] : names) {
    Result<ZooModel> zoo = BuildZooModel(name);
    ASSERT_TRUE(zoo.ok()) << zoo.status().ToString();
    const int64_t count = WeightCount(zoo->model);
    EXPECT_NEAR(static_cast<double>(count) / figure, 1.0, 0.03) << name << ": " << count;
  }
  Result<ZooModel> small = BuildZooModel("wresnet-250m");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(WeightCount(small->model), 254123104);
}

// A marker after the stem (layer 0) and after each block (layers 1..blocks), each once.
TEST(WResNetTest, LayerBoundariesAreTheStemAndEachBlock) {
  for (const auto& [layers, blocks] : {std::pair<int64_t, int64_t>{14, 4}, {50, 16}, {101, 33}}) {
    Result<Model> model = BuildWResNet({.layers = layers});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    std::vector<int64_t> seen;
    for (const auto& instruction : model->loss->entry()->instructions()) {
      if (auto boundary = ir::AsLayerBoundary(*instruction)) seen.push_back(boundary->layer);
    }
    std::vector<int64_t> expected(static_cast<size_t>(blocks) + 1);
    std::iota(expected.begin(), expected.end(), 0);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, expected) << "depth " << layers;
  }
}

TEST(WResNetTest, LossAtInitIsNearLogClassesInEveryFloatType) {
  for (ir::DType dtype : {ir::DType::kF32, ir::DType::kBF16}) {
    const WResNetConfig config{
        .batch = 4, .image = 16, .layers = 14, .channels = 4, .dtype = dtype};
    Result<Model> model = BuildWResNet(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(model->loss->entry()->root()->shape().dtype(), ir::DType::kF32);
    std::vector<ir::Literal> arguments = InitialWeights(*model, 1);
    for (ir::Literal& value : model->batch(config.batch, 7)) arguments.push_back(std::move(value));
    Result<ir::Literal> loss = interp::EvaluateModule(*model->loss, std::move(arguments));
    ASSERT_TRUE(loss.ok()) << loss.status().ToString();
    const double expected = std::log(static_cast<double>(config.classes));
    EXPECT_NEAR(loss->GetDouble(0), expected, 0.2 * expected) << ir::DTypeName(dtype);
  }
}

// Every rule of the model (stride-2 and padded convolutions, max-pool, BatchNorm's batch
// statistics, the average pool, the cross-entropy) against central differences in f64, at the
// first, middle and last element of every weight. BN scales and biases are drawn away from their
// init (ones and zeros) so that every path carries gradient. The ReLUs and the max-pool have kinks
// that a step of 1e-6 could cross; with normalised activations that is a ~1e-6 chance per value,
// and seed 3 crosses none.
TEST(WResNetTest, GradientMatchesFiniteDifferences) {
  const WResNetConfig config{.batch = 3,
                             .image = 32,
                             .layers = 14,
                             .channels = 2,
                             .width_factor = 2,
                             .classes = 3,
                             .dtype = ir::DType::kF64};
  Result<Model> model = BuildWResNet(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const uint64_t seed = 3;
  std::vector<ir::Literal> inputs = InitialWeights(*model, seed);
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (model->init[k].kind == WeightInit::Kind::kNormal) continue;
    const ir::Literal noise = NormalLiteral(inputs[k].shape(), 0.3, seed + 100 + k);
    for (int64_t i = 0; i < noise.element_count(); ++i) {
      inputs[k].SetDouble(i, inputs[k].GetDouble(i) + noise.GetDouble(i));
    }
  }
  for (ir::Literal& value : model->batch(config.batch, seed)) inputs.push_back(std::move(value));
  testing::ExpectModelGradientMatchesFiniteDifferences(*model, inputs,
                                                       {.absolute = 1e-7, .relative = 1e-5});
}

// wresnet-tiny with its zoo training (SGD, momentum 0.9) on a fresh batch each step: the mean
// loss of the last 5 of 50 steps is below 70% of the first 5 steps'. Batches of 8 make the loss
// noisy: over weight seeds 1..8 the ratio was 0.12-0.79 at the zoo's learning rate 0.05 (three
// seeds above 0.7) and 0.20-0.49 at 0.02; seed 1 gives 0.12 and 0.23. Its exact value also moves
// with oneDNN's thread count (0.12 with 2 threads, 0.21 with 1).
TEST(WResNetTest, TinyTrainingLowersTheLoss) {
  const std::vector<double> losses = testing::TrainZooModel("wresnet-tiny", 50, 1, 1000);
  ASSERT_EQ(losses.size(), 50u);
  const testing::FirstAndLast means = testing::MeansOfFirstAndLast(losses, 5);
  EXPECT_LT(means.last, 0.7 * means.first) << "first-5 mean " << means.first;
  RecordProperty("first_5_mean_loss", std::to_string(means.first));
  RecordProperty("last_5_mean_loss", std::to_string(means.last));
}

TEST(WResNetTest, BadConfigsNameTheField) {
  EXPECT_THAT(BuildWResNet({.batch = 0}).status().message(), HasSubstr("wresnet: batch is 0"));
  EXPECT_THAT(BuildWResNet({.channels = -2}).status().message(),
              HasSubstr("wresnet: channels is -2"));
  EXPECT_THAT(BuildWResNet({.width_factor = 0}).status().message(),
              HasSubstr("wresnet: width_factor is 0"));
  EXPECT_THAT(BuildWResNet({.classes = 0}).status().message(), HasSubstr("wresnet: classes is 0"));
  EXPECT_THAT(BuildWResNet({.image = 8}).status().message(),
              HasSubstr("wresnet: image is 8; it must be at least 16"));
  EXPECT_THAT(BuildWResNet({.layers = 34}).status().message(),
              HasSubstr("wresnet: layers is 34; the supported depths are 14, 26, 50, 101, 152, "
                        "200"));
  EXPECT_THAT(BuildWResNet({.dtype = ir::DType::kS32}).status().message(),
              HasSubstr("wresnet: dtype s32 is not a float type"));
}

}  // namespace
}  // namespace alpa::models
