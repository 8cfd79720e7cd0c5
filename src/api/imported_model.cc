#include "api/imported_model.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "api/hlo_import.h"
#include "ir/builder.h"
#include "onnx/graph_import.h"
#include "pipeline/layer_marking.h"
#include "pipeline/stage_slicing.h"
#include "support/file.h"

namespace alpa::api {

bool IsOnnxPath(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

namespace {

// After the import failed at `batch`: where it imports at the exported batch, the export baked
// its batch into the graph's shapes (torch's nn.MultiheadAttention reshapes by constants), which
// is a precondition of the model, not a fault of the file; a planner searching micro-batch
// counts skips such a count. Returns `failure` otherwise.
Status ExportFixesItsBatch(const onnx::OnnxFile& file, int64_t batch, const Status& failure) {
  ir::ModuleBuilder scratch("scratch");
  ir::ComputationBuilder b = scratch.NewComputation("scratch");
  Result<onnx::ImportedGraph> exported = onnx::ImportGraph(file, b, {});
  if (!exported.ok() || exported->inputs.empty() || exported->inputs[0]->shape().rank() == 0) {
    return failure;
  }
  const int64_t fixed = exported->inputs[0]->shape().dim(0);
  if (fixed == batch) return failure;
  return FailedPrecondition(
      "the export fixes its batch at {} ({}; at batch {}: {}); use micro-batches of {} (--batch "
      "{} x the micro-batches), or export with dynamic_axes={{'input': {{0: 'batch'}}}}",
      fixed, file.path, batch, failure.message(), fixed, fixed);
}

}  // namespace

Result<models::ZooModel> ImportOnnxModel(const std::string& path,
                                         const ImportModelOptions& options) {
  ALPA_ASSIGN_OR_RETURN(onnx::OnnxFile file, onnx::ReadOnnxFile(path));
  const std::string name = std::filesystem::path(path).stem().string();
  ir::ModuleBuilder mb(name.empty() ? "onnx" : name);
  ir::ComputationBuilder b = mb.NewComputation("loss");
  Result<onnx::ImportedGraph> imported = onnx::ImportGraph(file, b, {.batch = options.batch});
  if (!imported.ok() && options.batch) {
    ALPA_RETURN_IF_ERROR(ExportFixesItsBatch(file, *options.batch, imported.status()));
  }
  ALPA_ASSIGN_OR_RETURN(onnx::ImportedGraph graph, std::move(imported));
  const auto labels = static_cast<int64_t>(graph.inputs.size() + graph.weights.size());
  Result<ir::Instruction*> loss = models::AppendLoss(b, graph.output, options.loss, labels);
  if (!loss.ok()) return loss.status().WithContext(path);
  Result<ir::Computation*> entry = b.Build(*loss);
  if (!entry.ok()) return entry.status().WithContext(path);
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  if (!module.ok()) return module.status().WithContext(path);

  models::ZooModel zoo;
  zoo.model.loss = std::move(module).value();
  std::vector<ir::Literal> values;
  if (options.read_weights) {
    ALPA_ASSIGN_OR_RETURN(values, onnx::ReadWeights(file, graph));
  }
  int64_t parameters = 0;
  for (size_t w = 0; w < graph.weights.size(); ++w) {
    zoo.model.weights.push_back(static_cast<int64_t>(graph.inputs.size() + w));
    parameters += graph.weights[w]->shape().ElementCount();
    zoo.model.init.push_back(models::WeightInit::Given(
        values.empty() ? nullptr : std::make_shared<const ir::Literal>(std::move(values[w]))));
  }
  std::vector<ir::Shape> inputs;
  std::vector<int64_t> index_bounds;
  for (const ir::Instruction* input : graph.inputs) {
    inputs.push_back(input->shape());
    index_bounds.push_back(models::IndexBound(*zoo.model.loss->entry(), *input));
  }
  zoo.model.batch = models::ForwardBatches(std::move(inputs), std::move(index_bounds),
                                           graph.output->shape(), options.loss);
  zoo.entry.name = path;
  zoo.entry.family = "onnx";
  zoo.entry.description =
      fmt::format("ONNX opset {}, {} parameters, {} loss{}", file.opset, parameters,
                  models::LossKindName(options.loss),
                  graph.notes.empty() ? "" : fmt::format(" ({})", fmt::join(graph.notes, "; ")));
  zoo.training.optimizer.kind = autodiff::OptimizerKind::kAdam;
  zoo.training.optimizer.learning_rate = 1e-3;
  return zoo;
}

namespace {

// The entry parameters `spec` names (see HloLossOptions::weights), sorted.
Result<std::vector<int64_t>> ParseWeights(const std::string& spec,
                                          const std::vector<ir::Instruction*>& parameters) {
  const auto count = static_cast<int64_t>(parameters.size());
  std::set<int64_t> chosen;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    int64_t first = 0, last = 0;
    const size_t dash = item.find('-', 1);
    const std::string head = item.substr(0, dash);
    auto [end, error] = std::from_chars(head.data(), head.data() + head.size(), first);
    if (error == std::errc() && end == head.data() + head.size()) {
      last = first;
      if (dash != std::string::npos) {
        const std::string tail = item.substr(dash + 1);
        auto [tail_end, tail_error] = std::from_chars(tail.data(), tail.data() + tail.size(), last);
        if (tail_error != std::errc() || tail_end != tail.data() + tail.size()) {
          return InvalidArgument("--weights {}: '{}' is not a parameter range like 0-5", spec,
                                 item);
        }
      }
      if (first < 0 || last >= count || first > last) {
        return InvalidArgument(
            "--weights {}: '{}' is out of range; the module has {} parameters "
            "(0 to {})",
            spec, item, count, count - 1);
      }
      for (int64_t p = first; p <= last; ++p) chosen.insert(p);
      continue;
    }
    bool matched = false;
    for (int64_t p = 0; p < count; ++p) {
      if (parameters[static_cast<size_t>(p)]->name().rfind(item, 0) == 0) {
        chosen.insert(p);
        matched = true;
      }
    }
    if (!matched) {
      std::vector<std::string> names;
      for (const ir::Instruction* parameter : parameters) names.push_back(parameter->name());
      return InvalidArgument(
          "--weights {}: no parameter's name starts with '{}'; the parameters "
          "are {}",
          spec, item, fmt::join(names, ", "));
    }
  }
  if (chosen.empty()) return InvalidArgument("--weights '{}' names no parameter", spec);
  for (int64_t p : chosen) {
    const ir::Shape& shape = parameters[static_cast<size_t>(p)]->shape();
    if (!shape.IsArray() || !ir::IsFloating(shape.dtype())) {
      return InvalidArgument(
          "--weights {}: parameter {} (%{}) is {}, not a floating-point array; "
          "only those are trained",
          spec, p, parameters[static_cast<size_t>(p)]->name(), shape.ToString());
    }
  }
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

// How Flax initialises a parameter of this shape and name (see ImportHloLoss).
models::WeightInit FlaxInit(const ir::Instruction& parameter) {
  const ir::Shape& shape = parameter.shape();
  if (shape.rank() >= 2) {
    int64_t fan_in = 1;
    for (int64_t d = 0; d + 1 < shape.rank(); ++d) fan_in *= shape.dim(d);
    return models::WeightInit::Normal(1 / std::sqrt(static_cast<double>(fan_in)));
  }
  const std::string& name = parameter.name();
  return name.find("scale") != std::string::npos ? models::WeightInit::Ones()
                                                 : models::WeightInit::Zeros();
}

}  // namespace

Result<models::ZooModel> ImportHloLoss(const std::string& path, const HloLossOptions& options) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ImportHloLossText(text, path, options);
}

Result<std::shared_ptr<const autodiff::UpdateProgram>> ImportUpdateProgram(const std::string& path,
                                                                           int64_t num_weights) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ImportUpdateProgramText(text, path, num_weights);
}

Result<std::shared_ptr<const autodiff::UpdateProgram>> ImportUpdateProgramText(
    const std::string& text, const std::string& path, int64_t num_weights) {
  ALPA_ASSIGN_OR_RETURN(ImportedHlo imported, ImportHloText(text, path));
  Result<autodiff::UpdateProgram> program =
      autodiff::SplitUpdateProgram(std::move(imported.module), num_weights);
  if (!program.ok()) return program.status().WithContext(path);
  return std::make_shared<const autodiff::UpdateProgram>(std::move(program).value());
}

Result<models::ZooModel> ImportHloLossText(const std::string& text, const std::string& path,
                                           const HloLossOptions& options) {
  ALPA_ASSIGN_OR_RETURN(ImportedHlo imported, ImportHloText(text, path));
  if (!imported.flattening.loops_kept.empty()) {
    // Autodiff differentiates straight-line code: every loop of a loss must unroll.
    const ir::KeptLoop& loop = imported.flattening.loops_kept.front();
    return InvalidArgument(
        "{}: the loss keeps the loop %{}, which autodiff cannot differentiate: {}", path, loop.name,
        loop.reason);
  }
  std::unique_ptr<ir::Module> module = std::move(imported.module);
  Result<pipeline::LayerMarkingStats> alpa_layers =
      pipeline::ReadAlpaPipelineMarkers(*module->entry());
  if (!alpa_layers.ok()) return alpa_layers.status().WithContext(path);
  const ir::Instruction* root = module->entry()->root();
  if (!root->shape().IsArray() || root->shape().rank() != 0 ||
      !ir::IsFloating(root->shape().dtype())) {
    return InvalidArgument(
        "{}: the module's result is {}, not a scalar loss; dump the loss function "
        "(jax.jit(loss).lower(params, batch).as_text(dialect=\"hlo\"))",
        path, root->shape().ToString());
  }
  const std::vector<ir::Instruction*> parameters = module->entry()->parameters();
  Result<std::vector<int64_t>> weights = ParseWeights(options.weights, parameters);
  if (!weights.ok()) return weights.status().WithContext(path);

  models::ZooModel zoo;
  zoo.model.weights = *weights;
  std::vector<ir::Shape> batch;
  int64_t parameter_count = 0;
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (std::binary_search(weights->begin(), weights->end(), static_cast<int64_t>(p))) {
      zoo.model.init.push_back(FlaxInit(*parameters[p]));
      parameter_count += parameters[p]->shape().ElementCount();
    } else {
      batch.push_back(parameters[p]->shape());
    }
  }
  if (batch.empty()) {
    return InvalidArgument("{}: --weights {} takes every parameter; the batch must be one", path,
                           options.weights);
  }
  const int64_t fixed = batch[0].rank() > 0 ? batch[0].dim(0) : 0;
  if (options.batch && *options.batch != fixed) {
    return FailedPrecondition(
        "the module fixes its batch at {} ({}: at batch {}); use micro-batches of {} (--batch {} "
        "x the micro-batches), or lower the loss again at the batch you want",
        fixed, path, *options.batch, fixed, fixed);
  }
  std::vector<int64_t> index_bounds;
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (!std::binary_search(weights->begin(), weights->end(), static_cast<int64_t>(p))) {
      index_bounds.push_back(models::IndexBound(*module->entry(), *parameters[p]));
    }
  }
  zoo.model.batch = models::ForwardBatches(std::move(batch), std::move(index_bounds), root->shape(),
                                           models::LossKind::kOutput);
  zoo.model.loss = std::move(module);
  zoo.entry.name = path;
  zoo.entry.family = "hlo";
  zoo.entry.description = fmt::format(
      "HLO loss, {} parameters in {} weights, initialised as Flax does (the file holds no "
      "values){}",
      parameter_count, weights->size(),
      alpa_layers->removed == 0
          ? ""
          : fmt::format("; {} layers from Alpa's {} pipeline markers",
                        pipeline::LayersFromBoundaries(*zoo.model.loss->entry()).num_layers,
                        alpa_layers->removed));
  zoo.training.optimizer.kind = autodiff::OptimizerKind::kAdam;
  zoo.training.optimizer.learning_rate = 1e-3;
  return zoo;
}

}  // namespace alpa::api
