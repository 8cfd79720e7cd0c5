// The model zoo by name: Alpa's benchmark sizes (../shared/reference/alpa.md, "Benchmarks"),
// Llama 3 and Mixtral at their published configurations (llama.h), and tiny variants that train
// in seconds on one CPU core.
//
//   Result<ZooModel> gpt = BuildZooModel("gpt-1.3b", {.layers = 4});
//   // gpt->model: the loss and its weights; gpt->training: the step's defaults (AdamW, remat)
//
// Every name accepts overrides of its config; one that the family does not have (experts for a
// GPT, heads for a Wide-ResNet) is an error naming it.
#ifndef ALPA_MODELS_ZOO_H_
#define ALPA_MODELS_ZOO_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/train_step.h"
#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct ZooOverrides {
  std::optional<int64_t> layers;
  std::optional<int64_t> hidden;  // transformers: hidden size; MLP: width; WResNet: channels
  std::optional<int64_t> heads;
  std::optional<int64_t> seq;
  std::optional<int64_t> vocab;
  std::optional<int64_t> experts;
  std::optional<int64_t> batch;  // of one micro-batch: the loss's batch size
  std::optional<ir::DType> dtype;
};

struct ZooEntry {
  std::string name;         // "gpt-1.3b"
  std::string family;       // "gpt", "bert", "moe", "llama", "mixtral", "wresnet", "mlp"
  std::string description;  // "GPT 1.3B: S 1024, H 2048, L 24, 32 heads, V 51200"
};

// Every model of the zoo, in a fixed order (by family, then size).
const std::vector<ZooEntry>& ZooEntries();

// The entry named `name`, or nullptr.
const ZooEntry* FindZooEntry(std::string_view name);

struct ZooModel {
  ZooEntry entry;
  Model model;
  // How Alpa's benchmarks train this model (optimizer, remat), with one micro-batch; tiny
  // models use plain f32 training without remat so that they train fast on a CPU.
  autodiff::TrainStepOptions training;
};

// Unknown names list the valid ones; bad configs (after overrides) name the field.
Result<ZooModel> BuildZooModel(std::string_view name, const ZooOverrides& overrides = {});

}  // namespace alpa::models

#endif  // ALPA_MODELS_ZOO_H_
