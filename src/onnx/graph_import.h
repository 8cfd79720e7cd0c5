// An ONNX model's forward graph as IR, built into a computation the caller then finishes (with
// a loss: models/forward_loss.h). The graph's inputs become the batch parameters, its trained
// initializers the weight parameters after them, each node one or more instructions.
//
//   Result<OnnxFile> file = ReadOnnxFile("gpt2.onnx");
//   ir::ModuleBuilder mb("gpt2");
//   ir::ComputationBuilder b = mb.NewComputation("main");
//   Result<ImportedGraph> graph = ImportGraph(*file, b, {});
//   // graph->output: the model's output; graph->weights: parameters to train
//
// Which initializers are weights: those the output depends on through floating-point values.
// A buffer (a causal mask compared to 0, BatchNormalization's running statistics in a training
// export) is not trained: used ones become constants, unused ones are dropped. So the weights
// are PyTorch's parameters (model.parameters()) for the exports examples/import/ makes.
#ifndef ALPA_ONNX_GRAPH_IMPORT_H_
#define ALPA_ONNX_GRAPH_IMPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "onnx/onnx_file.h"
#include "support/status.h"

namespace alpa::onnx {

struct ImportOptions {
  // Dimension 0 of every graph input (the batch): replaces the exported size, and must be
  // given where the export left it symbolic (dynamic_axes). Shape arithmetic in the graph
  // follows; a size baked into the export as a constant makes the Reshape that uses it fail.
  std::optional<int64_t> batch;
};

struct ImportedGraph {
  std::vector<ir::Instruction*> inputs;  // parameters 0..n-1: the graph's inputs
  std::vector<std::string> input_names;
  std::vector<ir::Instruction*> weights;  // parameters n..: the trained initializers
  std::vector<std::string> weight_names;
  std::vector<int> weight_initializers;  // their places in graph.initializer (ReadWeights)
  ir::Instruction* output = nullptr;     // the graph's only output
  std::vector<std::string> notes;        // what the import changed, for the user
};

// Builds the forward graph into `builder`. Errors name the file, the node, its operator and
// the opset: an unsupported operator or domain, a graph with other than one output, shapes
// an operator rejects.
Result<ImportedGraph> ImportGraph(const OnnxFile& file, ir::ComputationBuilder& builder,
                                  const ImportOptions& options);

// The weights' values, in the order of graph.weights (reads external data files).
Result<std::vector<ir::Literal>> ReadWeights(const OnnxFile& file, const ImportedGraph& graph);

// The operators the import converts, sorted.
std::vector<std::string> SupportedOperators();

}  // namespace alpa::onnx

#endif  // ALPA_ONNX_GRAPH_IMPORT_H_
