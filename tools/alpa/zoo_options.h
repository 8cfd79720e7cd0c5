// What the commands that take a MODEL share about the model zoo (models/zoo.h): the override
// flags, turning them into a model and its train step, and resolving a MODEL argument that may
// be an HLO file or a zoo name.
//
//   --layers --hidden --heads --seq --vocab --experts   the model's shape (models::ZooOverrides)
//   --batch B          the GLOBAL batch of one training step (default: the zoo's batch)
//   --micro-batches M  gradient accumulation over M micro-batches of B / M examples each
//   --dtype f32|f16|bf16
//   --remat / --no-remat, --optimizer sgd|adam|adamw, --lr X   (default: the zoo's training)
//
// The zoo builds a loss at the micro-batch size (ZooOverrides::batch) while the flag is the global
// batch. With --batch B the loss is built at B / M. Without it the global batch is the zoo's
// default, which only a build shows (the batch dimension of the loss's first batch parameter):
// with M = 1 that build is the one used; with M > 1 the model is built once at the default to
// read B and once more at B / M. Building is graph-only (no tensors), so the second build costs
// milliseconds even for the largest models. An imported model that fixes its batch (an HLO loss,
// an ONNX export with the batch baked into its shapes) cannot be built at B / M, nor can any
// model where M does not divide B: there --micro-batches M without --batch means M micro-batches
// of its own batch, a global batch of B x M.
#ifndef ALPA_TOOLS_ALPA_ZOO_OPTIONS_H_
#define ALPA_TOOLS_ALPA_ZOO_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "autodiff/train_step.h"
#include "cost/memory_model.h"
#include "ir/module.h"
#include "models/zoo.h"
#include "support/status.h"

namespace alpa::tools {

struct ZooFlags {
  // The model's shape.
  std::optional<int64_t> layers, hidden, heads, seq, vocab, experts;
  std::optional<int64_t> batch;  // global
  std::optional<std::string> dtype;
  std::optional<std::string> loss;  // of an imported model (models::ParseLossKind)
  std::optional<std::string> weights;  // of an HLO loss (api::HloLossOptions::weights)
  // The batches to train on (api::BatchesFromFile) in place of synthetic ones; `alpa run`'s
  // flag, and not among GivenFlags: it changes the data, not the step.
  std::optional<std::string> batch_file;
  // Not a flag: commands that only plan (inspect, plan) clear it, so that an imported model's
  // weights are not read (api::ImportModelOptions::read_weights).
  bool weights_needed = true;
  // Training (only on commands that build a train step).
  std::optional<int64_t> micro_batches;
  std::optional<int64_t> auto_layers;  // pipeline::MarkAutoLayers in place of the model's layers
  std::optional<bool> remat;
  std::optional<std::string> optimizer;
  std::optional<double> learning_rate;
  // The step's own optimizer (api::ImportUpdateProgram) in place of --optimizer: an HLO file.
  std::optional<std::string> update_program;

  // "--layers", "--dtype", ... for every flag given, in the order above.
  std::vector<std::string> GivenFlags() const;
};

// Registers the model-shape flags on `command`; with `training`, the training flags as well.
void AddZooFlags(CLI::App& command, ZooFlags& flags, bool training);

// A zoo model with its train step, built as the flags say.
struct ZooStep {
  models::ZooModel zoo;
  autodiff::TrainStepOptions training;  // the zoo's, after the flags
  int64_t batch = 0;                    // global batch of one step (micro-batches stacked)
  int64_t weight_elements = 0;          // elements of all weights: the model's parameter count
  int64_t weight_bytes = 0;             // the same in the loss's dtype
  ir::DType dtype = ir::DType::kF32;    // of the loss's weights
  std::unique_ptr<ir::Module> step;     // null when built without a step (BuildZooModelOnly)
};

// The model `name` of the zoo with the flags' overrides, the ONNX file `name` with --loss and
// --batch (api::ImportOnnxModel) or the HLO loss `name` with --weights (api::ImportHloLoss),
// and its train step. Errors name the model and the flag or
// config field at fault.
Result<ZooStep> BuildZooStep(const std::string& name, const ZooFlags& flags);

// The same without the train step (for `alpa grad`, which differentiates the loss itself).
Result<ZooStep> BuildZooLoss(const std::string& name, const ZooFlags& flags);

// The train step's parameters in order (autodiff::StepParameterLayout of the zoo's loss).
std::vector<autodiff::StepParameter> StepLayout(const ZooStep& zoo);

// The model-shape overrides given, as (key, value) pairs in a fixed order: layers, hidden, heads,
// seq, vocab, experts.
std::vector<std::pair<std::string, int64_t>> ShapeOverrides(const ZooFlags& flags);

// The config of a built step as (key, value) pairs in a fixed order: batch, micro_batches,
// micro_batch_size, dtype, remat, optimizer, learning_rate, then the model-shape overrides given.
// Values are numbers, strings or booleans as JSON would hold them.
struct ConfigValue {
  std::string key;
  std::variant<int64_t, double, bool, std::string> value;
};
std::vector<ConfigValue> StepConfig(const ZooStep& step, const ZooFlags& flags);

// One line for people: "batch 8 (2 micro-batches of 4), f16 (f32 master weights), adamw lr 0.01,
// remat".
std::string DescribeConfig(const ZooStep& step);

// The MODEL argument of a command: an existing path is an HLO file (zoo flags are then an
// error); otherwise a zoo name builds that model (and its train step, the module commands work
// on); otherwise the error lists the zoo's names.
struct ModelArgument {
  std::unique_ptr<ir::Module> file;  // the HLO file's module
  std::optional<ZooStep> zoo;        // or the zoo model

  const ir::Module& module() const { return file ? *file : *zoo->step; }
};
Result<ModelArgument> ResolveModel(const std::string& argument, const ZooFlags& flags);

// Whether `argument` is a model with weights and a loss, which BuildZooStep builds: a model of
// the zoo (an existing path wins), an ONNX file, or an HLO loss given --weights. Otherwise it
// is an HLO file of a whole step (or an unknown name).
bool IsTrainableModel(const std::string& argument, const ZooFlags& flags);

// "no model named 'X': ..." listing the zoo's names.
Status UnknownModel(const std::string& argument);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_ZOO_OPTIONS_H_
