// The api tests' zoo training steps: a tiny zoo model's train step with SGD and momentum, its
// first carried values and the batches of its steps.
#ifndef ALPA_TESTS_API_ZOO_STEP_H_
#define ALPA_TESTS_API_ZOO_STEP_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "ir/literal.h"
#include "models/init.h"
#include "models/zoo.h"

namespace alpa::api::testing {

// The zoo model's train step with SGD and momentum: Adam divides each gradient by its own
// magnitude, so a gradient that is zero up to rounding (GPT's key bias: softmax ignores a shift
// shared by every key) would move its weight by up to the learning rate in a direction set by
// the order of the sums, and the comparison would measure that rather than the partitioner.
struct ZooStep {
  models::ZooModel zoo;
  std::unique_ptr<ir::Module> module;
  std::vector<autodiff::StepParameter> layout;
};

inline ZooStep BuildStep(const std::string& name) {
  Result<models::ZooModel> zoo = models::BuildZooModel(name);
  EXPECT_TRUE(zoo.ok()) << zoo.status().message();
  autodiff::TrainStepOptions options = zoo->training;
  options.optimizer.kind = autodiff::OptimizerKind::kSgd;
  options.optimizer.learning_rate = 0.05;
  options.optimizer.momentum = 0.9;
  const models::Model& model = zoo->model;
  Result<std::unique_ptr<ir::Module>> module =
      autodiff::BuildTrainStep(*model.loss, model.weights, options);
  EXPECT_TRUE(module.ok()) << module.status().message();
  std::vector<autodiff::StepParameter> layout =
      autodiff::StepParameterLayout(*model.loss, model.weights, options);
  return ZooStep{std::move(zoo).value(), std::move(module).value(), std::move(layout)};
}

// The weights, zero optimizer state and step count, then step `index`'s batch.
inline std::vector<ir::Literal> FirstArguments(const ZooStep& step) {
  const std::vector<ir::Instruction*> inputs = step.module->entry()->parameters();
  std::vector<ir::Literal> weights = models::InitialWeights(step.zoo.model, 3);
  std::vector<ir::Literal> arguments;
  for (size_t i = 0; i < step.layout.size(); ++i) {
    if (step.layout[i] == autodiff::StepParameter::kBatch) break;
    arguments.push_back(i < weights.size() ? std::move(weights[i])
                                           : ir::Literal::CreateZeros(inputs[i]->shape()));
  }
  return arguments;
}

inline void AppendBatch(const ZooStep& step, int64_t index, std::vector<ir::Literal>& arguments) {
  const int64_t rows = step.module->entry()->parameters().back()->shape().dim(0);
  for (ir::Literal& value : step.zoo.model.batch(rows, 100 + static_cast<uint64_t>(index))) {
    arguments.push_back(std::move(value));
  }
}

}  // namespace alpa::api::testing

#endif  // ALPA_TESTS_API_ZOO_STEP_H_
