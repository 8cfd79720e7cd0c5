// A model of the zoo: the loss of one (micro-)batch as an IR module, and which of its parameters
// are the weights to train (the others are the batch).
#ifndef ALPA_MODELS_MODEL_H_
#define ALPA_MODELS_MODEL_H_

#include <memory>
#include <vector>

#include "ir/module.h"

namespace alpa::models {

struct Model {
  std::unique_ptr<ir::Module> loss;
  std::vector<int64_t> weights;  // parameter numbers of the weights, in order
};

}  // namespace alpa::models

#endif  // ALPA_MODELS_MODEL_H_
