// What the zoo's model tests share: a model's weight count, chosen weights and batch, a weight by
// name, and the value of one instruction of its loss.
#ifndef ALPA_TESTS_MODELS_MODEL_INPUTS_H_
#define ALPA_TESTS_MODELS_MODEL_INPUTS_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "models/model.h"

namespace alpa::models::testing {

// The number of weight elements: the model's parameter count.
inline int64_t WeightCount(const Model& model) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  int64_t count = 0;
  for (int64_t w : model.weights) count += parameters[w]->shape().ElementCount();
  return count;
}

// Weights uniform in [-1, 1) * scale (weight w from seed w), normalisation scales (names ending
// in ".scale") 1.
inline std::vector<ir::Literal> UniformWeights(const Model& model, double scale) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  std::vector<ir::Literal> weights;
  for (int64_t w : model.weights) {
    ir::Literal value = interp::RandomLiteral(parameters[w]->shape(), static_cast<uint64_t>(w));
    const bool norm_scale = parameters[w]->name().ends_with(".scale");
    for (int64_t i = 0; i < value.element_count(); ++i) {
      value.SetDouble(i, norm_scale ? 1.0 : value.GetDouble(i) * scale);
    }
    weights.push_back(std::move(value));
  }
  return weights;
}

// UniformWeights, then the model's own batch of `rows` rows for seed 0.
inline std::vector<ir::Literal> UniformArguments(const Model& model, int64_t rows, double scale) {
  std::vector<ir::Literal> arguments = UniformWeights(model, scale);
  for (ir::Literal& input : model.batch(rows, 0)) arguments.push_back(std::move(input));
  return arguments;
}

// The index of the weight named `name` in model.weights.
inline size_t WeightIndex(const Model& model, const std::string& name) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  for (size_t k = 0; k < model.weights.size(); ++k) {
    if (parameters[model.weights[k]]->name() == name) return k;
  }
  ADD_FAILURE() << "no weight " << name;
  return 0;
}

// The value of `instruction` of the model's loss on `arguments` (the root moved to it for the
// evaluation).
inline ir::Literal ValueOf(const Model& model, ir::Instruction* instruction,
                           std::vector<ir::Literal> arguments) {
  ir::Computation* entry = model.loss->entry();
  ir::Instruction* root = entry->root();
  entry->set_root(instruction);
  Result<ir::Literal> value = interp::EvaluateModule(*model.loss, std::move(arguments));
  entry->set_root(root);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *std::move(value) : ir::Literal();
}

}  // namespace alpa::models::testing

#endif  // ALPA_TESTS_MODELS_MODEL_INPUTS_H_
