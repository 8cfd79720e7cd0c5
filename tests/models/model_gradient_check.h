// The whole-model gradient check the zoo's tests share: autodiff::Grad of a model's loss against
// central differences, evaluated by the interpreter.
#ifndef ALPA_TESTS_MODELS_MODEL_GRADIENT_CHECK_H_
#define ALPA_TESTS_MODELS_MODEL_GRADIENT_CHECK_H_

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "autodiff/grad.h"
#include "interp/evaluator.h"
#include "models/model.h"

namespace alpa::models::testing {

struct Tolerance {
  double absolute = 1e-6;
  double relative = 1e-4;  // of |numeric|
};

// At `inputs` (the weights, then the batch), compares dloss/dw from autodiff::Grad with
// (loss(w + h e_i) - loss(w - h e_i)) / 2h, h = 1e-6, at the first, a third, the middle and the
// last element of every weight. Returns Grad's result (loss, gradients...) for further checks,
// or an empty literal after a failure.
inline ir::Literal ExpectModelGradientMatchesFiniteDifferences(
    const Model& model, const std::vector<ir::Literal>& inputs, Tolerance tolerance = {}) {
  Result<std::unique_ptr<ir::Module>> grad = autodiff::Grad(*model.loss, model.weights);
  EXPECT_TRUE(grad.ok()) << grad.status().ToString();
  if (!grad.ok()) return ir::Literal();
  Result<ir::Literal> result = interp::EvaluateModule(**grad, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return ir::Literal();
  auto loss_at = [&](const std::vector<ir::Literal>& arguments) {
    Result<ir::Literal> loss = interp::EvaluateModule(*model.loss, arguments);
    return loss.ok() ? loss->GetDouble(0) : std::nan("");
  };
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  const double h = 1e-6;
  for (size_t k = 0; k < model.weights.size(); ++k) {
    const ir::Literal& analytic = result->tuple_element(static_cast<int64_t>(k) + 1);
    const int64_t n = analytic.element_count();
    for (int64_t i : std::set<int64_t>{0, n / 3, n / 2, n - 1}) {
      std::vector<ir::Literal> plus = inputs, minus = inputs;
      plus[k].SetDouble(i, inputs[k].GetDouble(i) + h);
      minus[k].SetDouble(i, inputs[k].GetDouble(i) - h);
      const double numeric = (loss_at(plus) - loss_at(minus)) / (2 * h);
      EXPECT_NEAR(analytic.GetDouble(i), numeric,
                  tolerance.absolute + tolerance.relative * std::abs(numeric))
          << parameters[static_cast<size_t>(model.weights[k])]->name() << " element " << i;
    }
  }
  return std::move(result).value();
}

}  // namespace alpa::models::testing

#endif  // ALPA_TESTS_MODELS_MODEL_GRADIENT_CHECK_H_
