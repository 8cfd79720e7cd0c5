// The MLP of the zoo: `layers` hidden layers of width `hidden` with ReLU, then a linear output,
// trained by mean squared error:
//   h_0 = x,  h_i = relu(h_{i-1} W_i + b_i) for i = 1..layers,  out = h_layers W_o + b_o
//   loss(W_1, b_1, ..., W_o, b_o, x[batch, input], y[batch, output]) = mean((out - y)^2)
// Each h_i leaves pipeline layer i - 1 (ir/layer_boundary.h): layers + 1 pipeline layers.
#ifndef ALPA_MODELS_MLP_H_
#define ALPA_MODELS_MLP_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct MlpConfig {
  int64_t batch = 8;
  int64_t input = 16;
  int64_t hidden = 32;
  int64_t layers = 2;
  int64_t output = 4;
  ir::DType dtype = ir::DType::kF32;
};

// Errors name the field that is not positive or the dtype that is not a float.
Result<Model> BuildMlp(const MlpConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_MLP_H_
