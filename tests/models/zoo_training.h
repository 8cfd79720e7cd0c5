// Trains a zoo model the way `alpa run` does, for the zoo's "it learns" tests: the zoo's own
// training options, the model's initial weights, and a fresh synthetic batch every step; and
// the check that a 16-bit model's mixed-precision step builds.
#ifndef ALPA_TESTS_MODELS_ZOO_TRAINING_H_
#define ALPA_TESTS_MODELS_ZOO_TRAINING_H_

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "../autodiff/training_loop.h"
#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "models/init.h"
#include "models/zoo.h"

namespace alpa::models::testing {

// The loss of each of `steps` steps of zoo model `name`: weights from `weight_seed`, step s on
// the batch drawn from `batch_seed + s`. Fails the test (and returns what it has) on an error or
// a non-finite loss.
inline std::vector<double> TrainZooModel(const std::string& name, int steps, uint64_t weight_seed,
                                         uint64_t batch_seed) {
  Result<ZooModel> zoo = BuildZooModel(name);
  EXPECT_TRUE(zoo.ok()) << zoo.status().ToString();
  if (!zoo.ok()) return {};
  const Model& model = zoo->model;
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model.loss, model.weights, zoo->training);
  EXPECT_TRUE(step.ok()) << step.status().ToString();
  if (!step.ok()) return {};
  // The batch's rows: dimension 0 of the loss's first batch parameter.
  const int64_t rows = model.loss->entry()->parameters()[model.weights.size()]->shape().dim(0);
  autodiff::testing::Training training =
      autodiff::testing::StartTraining(InitialWeights(model, weight_seed), zoo->training.optimizer);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const std::vector<double> loss = autodiff::testing::RunSteps(
        **step, training, model.batch(rows, batch_seed + static_cast<uint64_t>(s)), 1);
    if (loss.size() != 1 || !std::isfinite(loss[0])) {
      ADD_FAILURE() << name << ": step " << s << " gave no finite loss";
      return losses;
    }
    losses.push_back(loss[0]);
  }
  return losses;
}

// Mean of the first and of the last `n` losses.
struct FirstAndLast {
  double first = 0;
  double last = 0;
};

inline FirstAndLast MeansOfFirstAndLast(const std::vector<double>& losses, size_t n) {
  if (losses.size() < n) return {};
  const double count = static_cast<double>(n);
  return {std::accumulate(losses.begin(), losses.begin() + static_cast<long>(n), 0.0) / count,
          std::accumulate(losses.end() - static_cast<long>(n), losses.end(), 0.0) / count};
}

// A model built in 16-bit floats trains with an f32 master copy: its loss is f32 and near
// log(vocab) at its initial weights (on a batch of 4), and a mixed-precision AdamW train step
// with remat builds on it.
inline void ExpectHalfPrecisionModelTrains(const Model& model, double vocab) {
  EXPECT_EQ(model.loss->entry()->root()->shape().dtype(), ir::DType::kF32);
  std::vector<ir::Literal> arguments = InitialWeights(model, 1);
  for (ir::Literal& input : model.batch(4, 0)) arguments.push_back(std::move(input));
  Result<ir::Literal> loss = interp::EvaluateModule(*model.loss, std::move(arguments));
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  EXPECT_NEAR(loss->GetDouble(0), std::log(vocab), 0.5) << "near log(vocab) at init";
  Result<std::unique_ptr<ir::Module>> step = autodiff::BuildTrainStep(
      *model.loss, model.weights,
      {.optimizer = {.kind = autodiff::OptimizerKind::kAdamW, .learning_rate = 1e-2},
       .remat = true});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
}

}  // namespace alpa::models::testing

#endif  // ALPA_TESTS_MODELS_ZOO_TRAINING_H_
