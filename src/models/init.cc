#include "models/init.h"

#include <cmath>
#include <numbers>
#include <random>

namespace alpa::models {

ir::Literal NormalLiteral(const ir::Shape& shape, double stddev, uint64_t seed) {
  // The standard library's normal_distribution differs between implementations; Box-Muller on
  // the engine's raw 64-bit output does not. u1 is in (0, 1] so that log(u1) is finite.
  std::mt19937_64 engine(seed);
  auto uniform = [&engine] { return (static_cast<double>(engine() >> 11) + 1.0) * 0x1.0p-53; };
  ir::Literal literal = ir::Literal::CreateZeros(shape);
  const int64_t count = literal.element_count();
  for (int64_t i = 0; i < count; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * std::numbers::pi * uniform();
    literal.SetDouble(i, stddev * radius * std::cos(angle));
    if (i + 1 < count) literal.SetDouble(i + 1, stddev * radius * std::sin(angle));
  }
  return literal;
}

std::vector<ir::Literal> InitialWeights(const Model& model, uint64_t seed,
                                        std::optional<ir::DType> dtype) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  std::vector<ir::Literal> weights;
  for (size_t i = 0; i < model.weights.size(); ++i) {
    const ir::Shape& declared = parameters[static_cast<size_t>(model.weights[i])]->shape();
    const ir::Shape shape = ir::Shape::Array(dtype.value_or(declared.dtype()), declared.dims());
    const WeightInit& init = model.init[i];
    switch (init.kind) {
      case WeightInit::Kind::kZeros:
        weights.push_back(ir::Literal::CreateZeros(shape));
        break;
      case WeightInit::Kind::kOnes: {
        ir::Literal ones = ir::Literal::CreateZeros(shape);
        for (int64_t e = 0; e < ones.element_count(); ++e) ones.SetDouble(e, 1.0);
        weights.push_back(std::move(ones));
        break;
      }
      case WeightInit::Kind::kNormal:
        weights.push_back(NormalLiteral(shape, init.stddev, seed * 1000003 + i));
        break;
      case WeightInit::Kind::kGiven: {
        // Converted element by element where the step trains another type (f32 masters).
        ALPA_CHECK(init.value != nullptr, "weight {} was not read (a model built to be planned)",
                   i);
        ir::Literal given = ir::Literal::CreateZeros(shape);
        for (int64_t e = 0; e < given.element_count(); ++e) {
          given.SetDouble(e, init.value->GetDouble(e));
        }
        weights.push_back(std::move(given));
        break;
      }
    }
  }
  return weights;
}

}  // namespace alpa::models
