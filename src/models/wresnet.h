// The Wide-ResNet of Alpa's benchmarks (alpa/model/wide_resnet.py): a ResNet of bottleneck
// blocks whose width is scaled by `width_factor`, on square images, trained by softmax
// cross-entropy over `classes`.
#ifndef ALPA_MODELS_WRESNET_H_
#define ALPA_MODELS_WRESNET_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct WResNetConfig {
  int64_t batch = 4;
  int64_t image = 32;     // height = width
  int64_t layers = 50;    // 50 or 101 (ResNet depths), or the tiny depth documented in wresnet.cc
  int64_t channels = 16;  // filters of the first stage
  int64_t width_factor = 2;
  int64_t classes = 10;
  ir::DType dtype = ir::DType::kF32;
};

Result<Model> BuildWResNet(const WResNetConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_WRESNET_H_
