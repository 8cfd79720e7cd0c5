#include "gradient_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autodiff/grad.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"

namespace alpa::autodiff::testing {

std::unique_ptr<ir::Module> WeightedSumLoss(const std::vector<ir::Shape>& parameters,
                                            const BodyFn& body) {
  ir::ModuleBuilder mb("loss");
  ir::ComputationBuilder b = mb.NewComputation("loss");
  std::vector<ir::Instruction*> params;
  for (size_t i = 0; i < parameters.size(); ++i) {
    params.push_back(b.Parameter(static_cast<int64_t>(i), parameters[i]));
  }
  ir::Instruction* y = body(b, params);
  EXPECT_NE(y, nullptr) << b.status().ToString();
  if (y == nullptr) return nullptr;
  std::vector<double> weights(static_cast<size_t>(y->shape().ElementCount()));
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.5 + 0.37 * static_cast<double>(i % 7);
  ir::Instruction* w = b.Constant(ir::Literal::FromDoubles(y->shape(), weights));
  std::vector<int64_t> all(static_cast<size_t>(y->shape().rank()));
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  const ir::DType dtype = y->shape().dtype();
  ir::Instruction* loss = b.Reduce(b.Multiply(y, w), b.ConstantScalar(dtype, 0), all,
                                   mb.ScalarReducer(ir::Opcode::kAdd, dtype));
  Result<ir::Computation*> entry = b.Build(loss);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  if (!entry.ok()) return nullptr;
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

void ExpectGradientMatchesFiniteDifferences(const ir::Module& forward,
                                            const std::vector<int64_t>& wrt, double tolerance) {
  Result<std::unique_ptr<ir::Module>> gradient = Grad(forward, wrt);
  ASSERT_TRUE(gradient.ok()) << gradient.status().ToString();
  const std::vector<ir::Literal> inputs = interp::RandomArguments(*forward.entry(), 7);
  Result<ir::Literal> result = interp::EvaluateModule(**gradient, inputs);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto loss_at = [&](std::vector<ir::Literal> arguments) {
    Result<ir::Literal> loss = interp::EvaluateModule(forward, std::move(arguments));
    EXPECT_TRUE(loss.ok()) << loss.status().ToString();
    return loss.ok() ? loss->GetDouble(0) : 0.0;
  };
  EXPECT_NEAR(result->tuple_element(0).GetDouble(0), loss_at(inputs), 1e-12);
  constexpr double kStep = 1e-6;
  for (size_t k = 0; k < wrt.size(); ++k) {
    const ir::Literal& analytic = result->tuple_element(static_cast<int64_t>(k) + 1);
    const ir::Literal& x = inputs[wrt[k]];
    ASSERT_EQ(analytic.element_count(), x.element_count());
    for (int64_t i = 0; i < x.element_count(); ++i) {
      std::vector<ir::Literal> plus = inputs, minus = inputs;
      plus[wrt[k]].SetDouble(i, x.GetDouble(i) + kStep);
      minus[wrt[k]].SetDouble(i, x.GetDouble(i) - kStep);
      const double numeric = (loss_at(plus) - loss_at(minus)) / (2 * kStep);
      const double exact = analytic.GetDouble(i);
      EXPECT_NEAR(exact, numeric, tolerance * std::max(1.0, std::fabs(exact)))
          << "d loss / d parameter " << wrt[k] << " element " << i;
    }
  }
}

}  // namespace alpa::autodiff::testing
