// Models users bring: an ONNX file exported by PyTorch, or the HLO text of a JAX loss function,
// becomes a model like the zoo's (its loss, its weights, synthetic batches of the right shapes,
// training defaults), so every command and method that takes a zoo model takes it too.
//
//   Result<models::ZooModel> model = api::ImportOnnxModel("gpt2.onnx", {.loss = kCrossEntropy});
//   // model->model.loss: forward graph + loss; model->model.weights: the trained initializers
//   Result<models::ZooModel> jax = api::ImportHloLoss("loss.hlo", {.weights = "params"});
//   // what jax.jit(loss).lower(params, x, y).as_text(dialect="hlo") printed, trained in `params`
#ifndef ALPA_API_IMPORTED_MODEL_H_
#define ALPA_API_IMPORTED_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "autodiff/update_program.h"
#include "models/forward_loss.h"
#include "models/zoo.h"
#include "support/status.h"

namespace alpa::api {

struct ImportModelOptions {
  models::LossKind loss = models::LossKind::kCrossEntropy;
  // The loss's batch (one micro-batch): dimension 0 of the model's inputs, the exported size
  // when not given (onnx::ImportOptions::batch).
  std::optional<int64_t> batch;
  // Whether to read the weights' values (to run the model). Planning needs only their shapes,
  // so a model whose weights are gigabytes in external files plans without reading them.
  bool read_weights = true;
};

// Whether `path` names an ONNX file (by its .onnx extension) rather than HLO text.
bool IsOnnxPath(const std::string& path);

// The model in `path`: family "onnx", its name the path, its description the export's opset,
// parameter count and what the import changed; trained with Adam (lr 1e-3) in f32 without
// remat unless the step's options say otherwise. Errors name the file and the node at fault.
Result<models::ZooModel> ImportOnnxModel(const std::string& path,
                                         const ImportModelOptions& options);

struct HloLossOptions {
  // Which entry parameters are the weights: comma-separated parameter numbers (3), ranges (0-5)
  // or name prefixes (params: JAX names a parameter after its argument and pytree path, e.g.
  // params__params____Dense_0____kernel__.1). The others are the batch.
  std::string weights;
  std::optional<int64_t> batch;  // must be the module's own: its shapes are fixed
};

// The loss module in `path` (HLO text of a forward function returning a scalar). The file holds
// no weight values: they start as Flax initialises them (kernels of rank 2 and more normal with
// standard deviation 1/sqrt(fan_in), fan_in the product of all dimensions but the last; vectors
// zero, but those named *scale one). Alpa's pipeline markers, where the module has them, are its
// layers (pipeline::ReadAlpaPipelineMarkers). Errors name the file, the --weights item at fault
// (out of range, matching nothing, not a floating-point array), a result that is not a scalar
// loss, or a loop that does not unroll (api/hlo_import.h: autodiff needs straight-line code).
Result<models::ZooModel> ImportHloLoss(const std::string& path, const HloLossOptions& options);
// The same from HLO text in memory (the Python package's lowered loss); `path` names it in errors
// and is the model's name.
Result<models::ZooModel> ImportHloLossText(const std::string& text, const std::string& path,
                                           const HloLossOptions& options);

// The step's own optimizer from HLO (a JAX step's optax update, lowered as
// apply(W..., G..., S...) -> (W'..., S'...): autodiff/update_program.h) for a loss of
// `num_weights` weights, split by weight. Errors name `path`: the parser's, a program of another
// form, a value that reads two weights.
Result<std::shared_ptr<const autodiff::UpdateProgram>> ImportUpdateProgram(const std::string& path,
                                                                           int64_t num_weights);
Result<std::shared_ptr<const autodiff::UpdateProgram>> ImportUpdateProgramText(
    const std::string& text, const std::string& path, int64_t num_weights);

}  // namespace alpa::api

#endif  // ALPA_API_IMPORTED_MODEL_H_
