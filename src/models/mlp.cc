#include "models/mlp.h"

#include <cmath>
#include <string>

#include "ir/builder.h"
#include "ir/layer_boundary.h"
#include "models/config_check.h"
#include "models/init.h"
#include "models/transformer.h"

namespace alpa::models {

using ir::Instruction;

namespace {

Status CheckConfig(const MlpConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckAtLeast("mlp", {{"batch", config.batch},
                                            {"input", config.input},
                                            {"hidden", config.hidden},
                                            {"output", config.output}}));
  ALPA_RETURN_IF_ERROR(CheckAtLeast("mlp", {{"layers", config.layers}}, 0));
  return CheckFloatType("mlp", config.dtype);
}

// x normal(0, 1) and y[r, j] = sign_j * x[r, j mod input], sign_j = +-1 by j's parity: a fixed
// linear map the MLP can learn, cheap to make for the large variants.
std::vector<ir::Literal> TeacherBatch(const MlpConfig& config, int64_t rows, uint64_t seed) {
  ir::Literal x = NormalLiteral(ir::Shape::Array(config.dtype, {rows, config.input}), 1.0, seed);
  ir::Literal y = ir::Literal::CreateZeros(ir::Shape::Array(config.dtype, {rows, config.output}));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < config.output; ++j) {
      const double sign = j % 2 == 0 ? 1.0 : -1.0;
      y.SetDouble(r * config.output + j, sign * x.GetDouble(r * config.input + j % config.input));
    }
  }
  std::vector<ir::Literal> batch;
  batch.push_back(std::move(x));
  batch.push_back(std::move(y));
  return batch;
}

}  // namespace

Result<Model> BuildMlp(const MlpConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  const ir::DType dtype = config.dtype;
  auto array = [dtype](std::vector<int64_t> dims) { return ir::Shape::Array(dtype, dims); };
  ir::ModuleBuilder mb("mlp");
  ir::ComputationBuilder b = mb.NewComputation("mlp_loss");

  // Weights first (W, b per layer, the output layer last), then the batch. He initialisation
  // (stddev sqrt(2 / fan_in)) keeps the ReLU activations' scale from layer to layer.
  Model model;
  ParameterDeclarer declare(model, b, dtype);
  std::vector<Dense> dense;
  int64_t fan_in = config.input;
  for (int64_t layer = 0; layer <= config.layers; ++layer) {
    const bool last = layer == config.layers;
    const int64_t fan_out = last ? config.output : config.hidden;
    const std::string name = last ? "out" : "layer" + std::to_string(layer);
    dense.push_back(
        declare.DenseWeights(fan_in, fan_out, name, std::sqrt(2.0 / static_cast<double>(fan_in))));
    fan_in = fan_out;
  }
  Instruction* x = declare.Batch(array({config.batch, config.input}), "x");
  Instruction* y = declare.Batch(array({config.batch, config.output}), "y");

  Instruction* h = x;
  for (size_t layer = 0; layer < dense.size(); ++layer) {
    const auto& [w, bias] = dense[layer];
    const int64_t width = w->shape().dim(1);
    h = b.Add(b.MatMul(h, w), b.Broadcast(bias, {config.batch, width}, {1}));
    if (layer + 1 < dense.size()) {
      h = b.Maximum(h, b.Broadcast(b.ConstantScalar(dtype, 0), {config.batch, width}, {}));
      h = ir::EmitLayerBoundary(b, h, {.layer = static_cast<int64_t>(layer)});
    }
  }
  Instruction* error = b.Subtract(h, y);
  Instruction* sum = b.Sum(b.Multiply(error, error), {0, 1});
  const double count = static_cast<double>(config.batch * config.output);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * loss,
                        b.Build(b.Divide(sum, b.ConstantScalar(dtype, count))));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(loss));
  model.batch = [config](int64_t rows, uint64_t seed) { return TeacherBatch(config, rows, seed); };
  return model;
}

}  // namespace alpa::models
