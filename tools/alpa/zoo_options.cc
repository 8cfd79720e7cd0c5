#include "tools/alpa/zoo_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "api/batch_file.h"
#include "api/imported_model.h"
#include "pipeline/layer_marking.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

constexpr const char* kDTypes[] = {"f32", "f16", "bf16"};

Result<ir::DType> ParseZooDType(const std::string& text) {
  for (const char* name : kDTypes) {
    if (text == name) return *ir::ParseDType(text);
  }
  return InvalidArgument("--dtype {}: not a training dtype; use one of {}", text,
                         fmt::join(kDTypes, ", "));
}

Result<models::ZooOverrides> ModelOverrides(const ZooFlags& flags) {
  models::ZooOverrides overrides;
  overrides.layers = flags.layers;
  overrides.hidden = flags.hidden;
  overrides.heads = flags.heads;
  overrides.seq = flags.seq;
  overrides.vocab = flags.vocab;
  overrides.experts = flags.experts;
  if (flags.dtype) {
    ALPA_ASSIGN_OR_RETURN(overrides.dtype, ParseZooDType(*flags.dtype));
  }
  return overrides;
}

// The loss's batch size: dimension 0 of its first parameter that is not a weight (0 if none).
int64_t LossBatch(const models::Model& model) {
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  const std::set<int64_t> weights(model.weights.begin(), model.weights.end());
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (weights.count(static_cast<int64_t>(i)) > 0) continue;
    const ir::Shape& shape = parameters[i]->shape();
    return shape.IsArray() && shape.rank() > 0 ? shape.dim(0) : 0;
  }
  return 0;
}

// The zoo's flags for a model's shapes and types given: imported models have their own.
std::vector<std::string> ShapeAndTypeFlags(const ZooFlags& flags) {
  std::vector<std::string> given;
  for (const auto& [key, value] : ShapeOverrides(flags)) given.push_back("--" + key);
  if (flags.dtype) given.push_back("--dtype");
  return given;
}

// An ONNX file takes --loss and the batch; the zoo's shape overrides do not apply to it.
Result<models::ZooModel> ImportOnnx(const std::string& path, const models::ZooOverrides& overrides,
                                    const ZooFlags& flags) {
  const std::vector<std::string> shape_flags = ShapeAndTypeFlags(flags);
  if (!shape_flags.empty()) {
    return InvalidArgument(
        "{} applies to models of the zoo only, and {} is an ONNX model with its own shapes and "
        "types; drop the flag",
        fmt::join(shape_flags, ", "), path);
  }
  api::ImportModelOptions options;
  options.batch = overrides.batch;
  options.read_weights = flags.weights_needed;
  if (flags.loss) {
    ALPA_ASSIGN_OR_RETURN(options.loss, models::ParseLossKind(*flags.loss));
  }
  return api::ImportOnnxModel(path, options);
}

// An HLO loss takes --weights and its own batch; the loss is its result.
Result<models::ZooModel> ImportHlo(const std::string& path, const models::ZooOverrides& overrides,
                                   const ZooFlags& flags) {
  std::vector<std::string> model_flags = ShapeAndTypeFlags(flags);
  if (flags.loss) model_flags.push_back("--loss");
  if (!model_flags.empty()) {
    return InvalidArgument(
        "{} does not apply to an HLO loss ({}): its result is the loss, its shapes and types "
        "are fixed; drop the flag",
        fmt::join(model_flags, ", "), path);
  }
  return api::ImportHloLoss(path, {.weights = *flags.weights, .batch = overrides.batch});
}

Result<models::ZooModel> Build(const std::string& name, const models::ZooOverrides& overrides,
                               const ZooFlags& flags) {
  if (api::IsOnnxPath(name)) {
    if (flags.weights) {
      return InvalidArgument(
          "--weights applies to HLO losses; {} is an ONNX model, whose "
          "initializers are its weights",
          name);
    }
    return ImportOnnx(name, overrides, flags);
  }
  if (flags.weights) return ImportHlo(name, overrides, flags);
  if (flags.loss) {
    return InvalidArgument("--loss applies to imported (ONNX) models; {} has its own loss", name);
  }
  Result<models::ZooModel> zoo = models::BuildZooModel(name, overrides);
  // The zoo's own messages about an override start with the model's name already.
  if (!zoo.ok() && zoo.status().message().rfind(name, 0) != 0) {
    return zoo.status().WithContext(name);
  }
  return zoo;
}

bool IsImported(const models::ZooModel& model) {
  return model.entry.family == "onnx" || model.entry.family == "hlo";
}

// The zoo model at the micro-batch size, and the global batch (see the header on why the model
// may be built twice).
Result<std::pair<models::ZooModel, int64_t>> BuildAtBatch(const std::string& name,
                                                          const ZooFlags& flags) {
  ALPA_ASSIGN_OR_RETURN(models::ZooOverrides overrides, ModelOverrides(flags));
  const int64_t micro_batches = flags.micro_batches.value_or(1);
  if (micro_batches < 1) {
    return InvalidArgument("--micro-batches {}: it must be at least 1", micro_batches);
  }
  if (flags.batch && *flags.batch < 1) {
    return InvalidArgument("--batch {}: it must be at least 1", *flags.batch);
  }
  if (micro_batches == 1 || flags.batch) {
    // One build: the micro-batch size is known (or the default batch is the global one).
    if (flags.batch && *flags.batch % micro_batches != 0) {
      return InvalidArgument(
          "--batch {} is not divisible by --micro-batches {}: every micro-batch must have the "
          "same size; give a batch that is a multiple of {}",
          *flags.batch, micro_batches, micro_batches);
    }
    if (flags.batch) overrides.batch = *flags.batch / micro_batches;
    ALPA_ASSIGN_OR_RETURN(models::ZooModel zoo, Build(name, overrides, flags));
    const int64_t batch = LossBatch(zoo.model) * micro_batches;
    return std::pair{std::move(zoo), batch};
  }
  ALPA_ASSIGN_OR_RETURN(models::ZooModel at_default, Build(name, overrides, flags));
  const int64_t batch = LossBatch(at_default.model);
  if (batch % micro_batches != 0 && IsImported(at_default)) {
    return std::pair{std::move(at_default), batch * micro_batches};
  }
  if (batch % micro_batches != 0) {
    return InvalidArgument(
        "{}: its batch {} is not divisible by --micro-batches {}: every micro-batch must have "
        "the same size; give --batch as a multiple of {}",
        name, batch, micro_batches, micro_batches);
  }
  overrides.batch = batch / micro_batches;
  Result<models::ZooModel> zoo = Build(name, overrides, flags);
  if (!zoo.ok() && zoo.status().code() == StatusCode::kFailedPrecondition) {
    // An imported model that fixes its batch: M micro-batches of that batch.
    return std::pair{std::move(at_default), batch * micro_batches};
  }
  if (!zoo.ok()) return zoo.status();
  return std::pair{std::move(zoo).value(), batch};
}

Result<autodiff::TrainStepOptions> Training(const models::ZooModel& zoo, const ZooFlags& flags) {
  autodiff::TrainStepOptions training = zoo.training;
  training.num_micro_batches = flags.micro_batches.value_or(1);
  if (flags.remat) training.remat = *flags.remat;
  if (flags.optimizer) {
    Result<autodiff::OptimizerKind> kind = autodiff::ParseOptimizer(*flags.optimizer);
    if (!kind.ok()) return InvalidArgument("--optimizer {}", kind.status().message());
    training.optimizer.kind = *kind;
  }
  if (flags.learning_rate) {
    if (!(*flags.learning_rate > 0)) {
      return InvalidArgument("--lr {}: the learning rate must be positive", *flags.learning_rate);
    }
    training.optimizer.learning_rate = *flags.learning_rate;
  }
  if (flags.update_program) {
    if (flags.optimizer || flags.learning_rate) {
      return InvalidArgument(
          "--update-program {} is the step's optimizer; give it without --optimizer and --lr",
          *flags.update_program);
    }
    Result<std::shared_ptr<const autodiff::UpdateProgram>> update = api::ImportUpdateProgram(
        *flags.update_program, static_cast<int64_t>(zoo.model.weights.size()));
    if (!update.ok()) return update.status().WithContext("--update-program");
    training.update = std::move(update).value();
  }
  return training;
}

Result<ZooStep> BuildZoo(const std::string& name, const ZooFlags& flags, bool with_step) {
  ALPA_ASSIGN_OR_RETURN(auto built, BuildAtBatch(name, flags));
  ZooStep step;
  step.zoo = std::move(built.first);
  step.batch = built.second;
  ALPA_ASSIGN_OR_RETURN(step.training, Training(step.zoo, flags));
  if (flags.auto_layers) {
    Result<pipeline::LayerMarkingStats> marked =
        pipeline::MarkAutoLayers(*step.zoo.model.loss->entry(), *flags.auto_layers);
    if (!marked.ok()) {
      return marked.status().WithContext(
          fmt::format("{}: --auto-layers {}", name, *flags.auto_layers));
    }
  }
  if (flags.batch_file) {
    Result<models::BatchGenerator> batches = api::BatchesFromFile(
        *flags.batch_file, *step.zoo.model.loss->entry(), step.zoo.model.weights, step.batch);
    if (!batches.ok()) return batches.status().WithContext("--batch-file");
    step.zoo.model.batch = std::move(batches).value();
  }
  const std::vector<ir::Instruction*> parameters = step.zoo.model.loss->entry()->parameters();
  for (int64_t weight : step.zoo.model.weights) {
    const ir::Shape& shape = parameters[weight]->shape();
    step.weight_elements += shape.ElementCount();
    step.weight_bytes += shape.ByteSize();
    step.dtype = shape.dtype();
  }
  if (!with_step) return step;
  Result<std::unique_ptr<ir::Module>> train_step =
      autodiff::BuildTrainStep(*step.zoo.model.loss, step.zoo.model.weights, step.training);
  if (!train_step.ok()) {
    return train_step.status().WithContext(fmt::format("{}: building the train step", name));
  }
  step.step = std::move(train_step).value();
  return step;
}

std::string FormatNumber(double value) { return fmt::format("{:g}", value); }

}  // namespace

std::vector<std::string> ZooFlags::GivenFlags() const {
  std::vector<std::string> given;
  const std::pair<bool, const char*> all[] = {
      {layers.has_value(), "--layers"},
      {hidden.has_value(), "--hidden"},
      {heads.has_value(), "--heads"},
      {seq.has_value(), "--seq"},
      {vocab.has_value(), "--vocab"},
      {experts.has_value(), "--experts"},
      {batch.has_value(), "--batch"},
      {dtype.has_value(), "--dtype"},
      {loss.has_value(), "--loss"},
      {weights.has_value(), "--weights"},
      {micro_batches.has_value(), "--micro-batches"},
      {auto_layers.has_value(), "--auto-layers"},
      {remat.has_value(), remat.value_or(false) ? "--remat" : "--no-remat"},
      {optimizer.has_value(), "--optimizer"},
      {learning_rate.has_value(), "--lr"},
      {update_program.has_value(), "--update-program"}};
  for (const auto& [is_given, flag] : all) {
    if (is_given) given.push_back(flag);
  }
  return given;
}

void AddZooFlags(CLI::App& command, ZooFlags& flags, bool training) {
  CLI::Option_group* group = command.add_option_group(
      "Model options", "For a MODEL from the zoo (`alpa zoo` lists them) or an ONNX file");
  group->add_option("--layers", flags.layers, "Number of layers (blocks)");
  group->add_option("--hidden", flags.hidden,
                    "Hidden size (transformers), width (MLP), channels (Wide-ResNet)");
  group->add_option("--heads", flags.heads, "Attention heads; must divide --hidden");
  group->add_option("--seq", flags.seq, "Sequence length");
  group->add_option("--vocab", flags.vocab, "Vocabulary size");
  group->add_option("--experts", flags.experts, "Experts per MoE layer");
  group->add_option("--batch", flags.batch,
                    "Global batch of one training step (default: the zoo's)");
  group->add_option("--dtype", flags.dtype, "Parameter and activation type: f32, f16 or bf16");
  group->add_option("--weights", flags.weights,
                    "Makes an HLO file a loss to train: the entry parameters that are weights, "
                    "as numbers (3), ranges (0-5) or name prefixes (params: JAX names each after "
                    "its argument); the result must be the scalar loss");
  group->add_option("--loss", flags.loss,
                    "Loss of an ONNX model: cross-entropy (default; the output are logits), mse "
                    "or output (the output is the loss)");
  if (!training) return;
  group->add_option("--micro-batches", flags.micro_batches,
                    "Gradient accumulation: the batch is split into this many micro-batches");
  group
      ->add_option("--auto-layers", flags.auto_layers,
                   "Cluster the model's operators into N layers by FLOPs and communication "
                   "(Alpa's automatic layer construction) in place of its own layers: the "
                   "layers a pipelined plan cuts into stages")
      ->check(CLI::PositiveNumber);
  group->add_flag_function(
      "--remat,!--no-remat", [&flags](int64_t count) { flags.remat = count > 0; },
      "Recompute each layer's activations in the backward pass (default: the zoo's)");
  group->add_option("--optimizer", flags.optimizer,
                    "sgd, adam, adamw or adafactor (default: the zoo's)");
  group->add_option("--lr", flags.learning_rate, "Learning rate (default: the zoo's)");
  group->add_option("--update-program", flags.update_program,
                    "The step's own optimizer in place of --optimizer: an HLO file of "
                    "apply(W..., G..., S...) -> (W'..., S'...) over the weights, their gradients "
                    "and its state (a JAX step's optax update, as the Python package's "
                    "get_hlo_text(\"update\") gives it)");
}

Result<ZooStep> BuildZooStep(const std::string& name, const ZooFlags& flags) {
  return BuildZoo(name, flags, /*with_step=*/true);
}

Result<ZooStep> BuildZooLoss(const std::string& name, const ZooFlags& flags) {
  return BuildZoo(name, flags, /*with_step=*/false);
}

std::vector<autodiff::StepParameter> StepLayout(const ZooStep& zoo) {
  const models::Model& loss = zoo.zoo.model;
  return autodiff::StepParameterLayout(*loss.loss, loss.weights, zoo.training);
}

std::vector<std::pair<std::string, int64_t>> ShapeOverrides(const ZooFlags& flags) {
  const std::pair<const std::optional<int64_t>&, const char*> shape[] = {
      {flags.layers, "layers"}, {flags.hidden, "hidden"}, {flags.heads, "heads"},
      {flags.seq, "seq"},       {flags.vocab, "vocab"},   {flags.experts, "experts"}};
  std::vector<std::pair<std::string, int64_t>> given;
  for (const auto& [value, key] : shape) {
    if (value) given.emplace_back(key, *value);
  }
  return given;
}

std::vector<ConfigValue> StepConfig(const ZooStep& step, const ZooFlags& flags) {
  const int64_t micro_batches = step.training.num_micro_batches;
  std::vector<ConfigValue> config = {
      {"batch", step.batch},
      {"micro_batches", micro_batches},
      {"micro_batch_size", step.batch / micro_batches},
      {"dtype", std::string(ir::DTypeName(step.dtype))},
      {"remat", step.training.remat},
      {"optimizer", step.training.update != nullptr
                        ? std::string("update program")
                        : std::string(autodiff::OptimizerName(step.training.optimizer.kind))},
      {"learning_rate", step.training.optimizer.learning_rate}};
  for (const auto& [key, value] : ShapeOverrides(flags)) config.push_back({key, value});
  return config;
}

std::string DescribeConfig(const ZooStep& step) {
  const int64_t micro_batches = step.training.num_micro_batches;
  std::string text = fmt::format("batch {}", step.batch);
  if (micro_batches > 1) {
    text += fmt::format(" ({} micro-batches of {})", micro_batches, step.batch / micro_batches);
  }
  text += fmt::format(", {}", ir::DTypeName(step.dtype));
  if (step.dtype != ir::DType::kF32) text += " (f32 master weights)";
  if (step.training.update != nullptr) {
    text += ", the step's own update program";
  } else {
    text += fmt::format(", {} lr {}", autodiff::OptimizerName(step.training.optimizer.kind),
                        FormatNumber(step.training.optimizer.learning_rate));
  }
  text += step.training.remat ? ", remat" : ", no remat";
  return text;
}

bool IsTrainableModel(const std::string& argument, const ZooFlags& flags) {
  std::error_code ignored;
  if (api::IsOnnxPath(argument) || flags.weights) return true;
  return !std::filesystem::exists(argument, ignored) && models::FindZooEntry(argument) != nullptr;
}

Status UnknownModel(const std::string& argument) {
  std::vector<std::string> names;
  for (const models::ZooEntry& entry : models::ZooEntries()) names.push_back(entry.name);
  return InvalidArgument(
      "no model named '{}': there is no such file, and the zoo has no model of that name; the "
      "zoo has: {} (`alpa zoo` describes them)",
      argument, fmt::join(names, ", "));
}

Result<ModelArgument> ResolveModel(const std::string& argument, const ZooFlags& flags) {
  ModelArgument model;
  if (IsTrainableModel(argument, flags)) {
    ALPA_ASSIGN_OR_RETURN(model.zoo, BuildZooStep(argument, flags));
    return model;
  }
  std::error_code ignored;
  // A path (with a '/') keeps the file's own error ("cannot open ..."); a bare word is more
  // likely a misspelt zoo name.
  if (!std::filesystem::exists(argument, ignored) && argument.find('/') == std::string::npos) {
    return UnknownModel(argument);
  }
  const std::vector<std::string> given = flags.GivenFlags();
  if (!given.empty()) {
    return InvalidArgument(
        "{} applies to models of the zoo only, and {} is an HLO file; drop the flag or name a zoo "
        "model (`alpa zoo` lists them)",
        fmt::join(given, ", "), argument);
  }
  ALPA_ASSIGN_OR_RETURN(model.file, LoadModel(argument));
  return model;
}

}  // namespace alpa::tools
