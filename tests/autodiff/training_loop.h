// A training loop over a train step (autodiff/train_step.h) run by the interpreter, the way a
// user's loop threads weights, optimizer state and the step count from one step to the next.
#ifndef ALPA_TESTS_AUTODIFF_TRAINING_LOOP_H_
#define ALPA_TESTS_AUTODIFF_TRAINING_LOOP_H_

#include <gtest/gtest.h>

#include <vector>

#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "ir/literal.h"

namespace alpa::autodiff::testing {

struct Training {
  std::vector<ir::Literal> carried;  // the weights, then their optimizer state (step order)
  ir::Literal step_count;            // t, the number of updates done
};

// Before the first step: the given weights, zero optimizer state, t = 0.
inline Training StartTraining(std::vector<ir::Literal> weights, const OptimizerConfig& optimizer) {
  Training training{std::move(weights), ir::Literal()};
  const size_t count = training.carried.size();
  for (size_t i = 0; i < count; ++i) {
    const ir::Shape weight = training.carried[i].shape();  // a copy: carried grows below
    for (const StateArray& array : OptimizerState(optimizer, weight.dims())) {
      training.carried.push_back(
          ir::Literal::CreateZeros(ir::Shape::Array(weight.dtype(), array.dims)));
    }
  }
  training.step_count = ir::Literal::Scalar(training.carried[0].shape().dtype(), 0);
  return training;
}

// Runs `steps` steps on the same `batch` and returns each step's loss; fails the test (and stops)
// on an evaluation error.
inline std::vector<double> RunSteps(const ir::Module& train_step, Training& training,
                                    const std::vector<ir::Literal>& batch, int steps) {
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    std::vector<ir::Literal> arguments = training.carried;
    arguments.push_back(training.step_count);
    arguments.insert(arguments.end(), batch.begin(), batch.end());
    Result<ir::Literal> result = interp::EvaluateModule(train_step, std::move(arguments));
    if (!result.ok()) {
      ADD_FAILURE() << "step " << step << ": " << result.status().ToString();
      return losses;
    }
    // Outputs: loss, the carried values in input order, then t + 1.
    losses.push_back(result->tuple_element(0).GetDouble(0));
    for (size_t i = 0; i < training.carried.size(); ++i) {
      training.carried[i] = result->tuple_element(static_cast<int64_t>(i) + 1);
    }
    training.step_count = result->tuple_element(static_cast<int64_t>(training.carried.size()) + 1);
  }
  return losses;
}

}  // namespace alpa::autodiff::testing

#endif  // ALPA_TESTS_AUTODIFF_TRAINING_LOOP_H_
