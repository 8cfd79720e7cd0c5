#include "api/imported_model.h"

#include <fmt/format.h>

#include <filesystem>

#include "ir/builder.h"
#include "onnx/graph_import.h"

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
  for (const ir::Instruction* input : graph.inputs) inputs.push_back(input->shape());
  zoo.model.batch = models::ForwardBatches(std::move(inputs), graph.index_bounds,
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

}  // namespace alpa::api
