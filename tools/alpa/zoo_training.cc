#include "tools/alpa/zoo_training.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <utility>

#include "interp/evaluator.h"
#include "models/init.h"

namespace alpa::tools {

namespace {

Result<std::vector<ir::Literal>> RunInInterpreter(const ir::Module& step,
                                                  std::vector<ir::Literal> arguments) {
  ALPA_ASSIGN_OR_RETURN(ir::Literal result, interp::EvaluateModule(step, std::move(arguments)));
  return std::move(result.tuple_elements());
}

}  // namespace

std::string FormatLoss(double loss) {
  return std::fabs(loss) < 1e5 ? fmt::format("{:.6f}", loss) : fmt::format("{:.4e}", loss);
}

ZooTraining::ZooTraining(const ZooStep& zoo, uint64_t seed, StepRunner runner)
    : zoo_(zoo), seed_(seed), runner_(std::move(runner)) {
  if (!runner_) {
    runner_ = [&step = *zoo.step](std::vector<ir::Literal> arguments) {
      return RunInInterpreter(step, std::move(arguments));
    };
  }
  const std::vector<ir::Instruction*> inputs = zoo.step->entry()->parameters();
  const models::Model& model = zoo.zoo.model;
  // The step's inputs: the carried values (weights, then their state), t, then the batch.
  const size_t batch_inputs =
      static_cast<size_t>(model.loss->entry()->parameter_count()) - model.weights.size();
  carried_count_ = inputs.size() - 1 - batch_inputs;
  // The weights are drawn in the step's type: the f32 master copy of a mixed-precision model.
  std::vector<ir::Literal> weights =
      models::InitialWeights(model, seed, inputs[0]->shape().dtype());
  for (size_t i = 0; i < carried_count_; ++i) {
    carried_.push_back(i < weights.size() ? std::move(weights[i])
                                          : ir::Literal::CreateZeros(inputs[i]->shape()));
  }
  step_count_ = ir::Literal::CreateZeros(inputs[carried_count_]->shape());
}

std::vector<ir::Literal> ZooTraining::Batch(int64_t index) const {
  return zoo_.zoo.model.batch(zoo_.batch, seed_ + static_cast<uint64_t>(index));
}

std::vector<ir::Literal> ZooTraining::Arguments(int64_t index) const {
  std::vector<ir::Literal> arguments = carried_;
  arguments.push_back(step_count_);
  for (ir::Literal& value : Batch(index)) arguments.push_back(std::move(value));
  return arguments;
}

Result<double> ZooTraining::Step(int64_t index, double& seconds) {
  // The carried values move into the step and come back as its results: no copies.
  std::vector<ir::Literal> arguments = std::move(carried_);
  carried_.clear();
  arguments.push_back(std::move(step_count_));
  for (ir::Literal& value : Batch(index)) arguments.push_back(std::move(value));

  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<ir::Literal>> result = runner_(std::move(arguments));
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    return result.status().WithContext(fmt::format("step {}: evaluation failed", index + 1));
  }
  // Results: the loss, the carried values in input order, then t + 1.
  std::vector<ir::Literal>& outputs = *result;
  const double loss = outputs[0].GetDouble(0);
  for (size_t i = 0; i < carried_count_; ++i) carried_.push_back(std::move(outputs[i + 1]));
  step_count_ = std::move(outputs[carried_count_ + 1]);
  return loss;
}

}  // namespace alpa::tools
