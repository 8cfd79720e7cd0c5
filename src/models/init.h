// The tensors of a model, made on demand: initial weights and synthetic batches (model.h).
#ifndef ALPA_MODELS_INIT_H_
#define ALPA_MODELS_INIT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/literal.h"
#include "ir/shape.h"
#include "models/model.h"

namespace alpa::models {

// The model's weights as its WeightInit says, in the order of model.weights, of the model's type
// or of `dtype` when given (a train step's f32 master weights: autodiff::MasterWeightType).
// Normal draws use a 64-bit Mersenne Twister seeded from (seed, weight index) and the Box-Muller
// transform, so the values are the same on every machine and standard library.
std::vector<ir::Literal> InitialWeights(const Model& model, uint64_t seed,
                                        std::optional<ir::DType> dtype = std::nullopt);

// Standard normal draws for `shape` (a float array), scaled by `stddev`, from `seed`.
ir::Literal NormalLiteral(const ir::Shape& shape, double stddev, uint64_t seed);

}  // namespace alpa::models

#endif  // ALPA_MODELS_INIT_H_
