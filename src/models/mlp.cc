#include "models/mlp.h"

#include <string>

#include "ir/builder.h"

namespace alpa::models {

using ir::Instruction;

namespace {

Status CheckConfig(const MlpConfig& config) {
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"batch", config.batch},
                                    {"input", config.input},
                                    {"hidden", config.hidden},
                                    {"output", config.output}}) {
    if (value < 1) return InvalidArgument("mlp: {} is {}; it must be at least 1", name, value);
  }
  if (config.layers < 0) {
    return InvalidArgument("mlp: layers is {}; it must be at least 0", config.layers);
  }
  if (!ir::IsFloating(config.dtype)) {
    return InvalidArgument("mlp: dtype {} is not a float type", ir::DTypeName(config.dtype));
  }
  return Status::Ok();
}

}  // namespace

Result<Model> BuildMlp(const MlpConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  const ir::DType dtype = config.dtype;
  auto array = [dtype](std::vector<int64_t> dims) { return ir::Shape::Array(dtype, dims); };
  ir::ModuleBuilder mb("mlp");
  ir::ComputationBuilder b = mb.NewComputation("mlp_loss");

  // Weights first (W, b per layer, the output layer last), then the batch.
  Model model;
  int64_t number = 0;
  std::vector<std::pair<Instruction*, Instruction*>> dense;
  int64_t fan_in = config.input;
  for (int64_t layer = 0; layer <= config.layers; ++layer) {
    const bool last = layer == config.layers;
    const int64_t fan_out = last ? config.output : config.hidden;
    const std::string name = last ? "out" : "layer" + std::to_string(layer);
    model.weights.push_back(number);
    Instruction* w = b.Parameter(number++, array({fan_in, fan_out}), name + ".w");
    model.weights.push_back(number);
    Instruction* bias = b.Parameter(number++, array({fan_out}), name + ".b");
    dense.emplace_back(w, bias);
    fan_in = fan_out;
  }
  Instruction* x = b.Parameter(number++, array({config.batch, config.input}), "x");
  Instruction* y = b.Parameter(number++, array({config.batch, config.output}), "y");

  Instruction* h = x;
  for (size_t layer = 0; layer < dense.size(); ++layer) {
    const auto& [w, bias] = dense[layer];
    const int64_t width = w->shape().dim(1);
    h = b.Add(b.MatMul(h, w), b.Broadcast(bias, {config.batch, width}, {1}));
    if (layer + 1 < dense.size()) {
      h = b.Maximum(h, b.Broadcast(b.ConstantScalar(dtype, 0), {config.batch, width}, {}));
    }
  }
  Instruction* error = b.Subtract(h, y);
  Instruction* sum = b.Reduce(b.Multiply(error, error), b.ConstantScalar(dtype, 0), {0, 1},
                              mb.ScalarReducer(ir::Opcode::kAdd, dtype));
  const double count = static_cast<double>(config.batch * config.output);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * loss,
                        b.Build(b.Divide(sum, b.ConstantScalar(dtype, count))));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(loss));
  return model;
}

}  // namespace alpa::models
