// A model of the zoo: the loss of one (micro-)batch as an IR module, which of its parameters are
// the weights to train (the others are the batch), how to initialise them, and synthetic data
// with a pattern the model can learn. Building a model allocates no tensors: weights and data
// are made only when InitialWeights / the batch generator are called (models/init.h).
#ifndef ALPA_MODELS_MODEL_H_
#define ALPA_MODELS_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"

namespace alpa::models {

// How one weight starts: all zeros (biases), all ones (normalisation scales), normal with mean
// 0 and the given standard deviation (matrices, embeddings), or given values (an imported
// model's own weights).
struct WeightInit {
  enum class Kind { kZeros, kOnes, kNormal, kGiven };
  Kind kind = Kind::kZeros;
  double stddev = 0.0;
  // kGiven: the values; null where the model was built to be planned only, without reading
  // them (api::ImportModelOptions::read_weights), and InitialWeights must not be called.
  std::shared_ptr<const ir::Literal> value;

  static WeightInit Zeros() { return {Kind::kZeros, 0.0, nullptr}; }
  static WeightInit Ones() { return {Kind::kOnes, 0.0, nullptr}; }
  static WeightInit Normal(double stddev) { return {Kind::kNormal, stddev, nullptr}; }
  static WeightInit Given(std::shared_ptr<const ir::Literal> value) {
    return {Kind::kGiven, 0.0, std::move(value)};
  }
};

// Values for the batch parameters of the loss (its parameters that are not weights, in parameter
// order) for `rows` examples along dimension 0, drawn from `seed`. `rows` is the loss's batch
// size times the number of micro-batches the train step stacks.
using BatchGenerator = std::function<std::vector<ir::Literal>(int64_t rows, uint64_t seed)>;

struct Model {
  std::unique_ptr<ir::Module> loss;
  std::vector<int64_t> weights;  // parameter numbers of the weights, in order
  std::vector<WeightInit> init;  // one per weight
  BatchGenerator batch;
};

}  // namespace alpa::models

#endif  // ALPA_MODELS_MODEL_H_
