// Models users bring: an ONNX file exported by PyTorch becomes a model like the zoo's (its loss,
// its own weights as they were exported, synthetic batches of the right shapes, training
// defaults), so every command and method that takes a zoo model takes it too.
//
//   Result<models::ZooModel> model = api::ImportOnnxModel("gpt2.onnx", {.loss = kCrossEntropy});
//   // model->model.loss: forward graph + loss; model->model.weights: the trained initializers
#ifndef ALPA_API_IMPORTED_MODEL_H_
#define ALPA_API_IMPORTED_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace alpa::api

#endif  // ALPA_API_IMPORTED_MODEL_H_
