// Small ONNX graphs made in C++ with the protobuf classes, for the operator tests: one or a few
// nodes, their inputs and initializers, imported and evaluated by the reference interpreter.
#ifndef ALPA_TESTS_ONNX_ONNX_GRAPH_MAKER_H_
#define ALPA_TESTS_ONNX_ONNX_GRAPH_MAKER_H_

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "ir/literal.h"
#include "onnx/graph_import.h"
#include "support/status.h"

namespace alpa::onnx::testing {

class GraphMaker {
 public:
  explicit GraphMaker(int64_t opset = 17);

  // A graph input of f32 (or another ONNX element type) and these dims.
  GraphMaker& Input(const std::string& name, std::vector<int64_t> dims,
                    int32_t type = ::onnx::TensorProto::FLOAT);
  GraphMaker& Initializer(const std::string& name, std::vector<int64_t> dims,
                          std::vector<float> values);
  GraphMaker& IntInitializer(const std::string& name, std::vector<int64_t> dims,
                             std::vector<int64_t> values);
  // A node; attributes are added to the returned node with the helpers below.
  ::onnx::NodeProto& Node(const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs);
  GraphMaker& Output(const std::string& name);

  ::onnx::ModelProto& model() { return model_; }

 private:
  ::onnx::ModelProto model_;
  int nodes_ = 0;
};

void SetInt(::onnx::NodeProto& node, const std::string& name, int64_t value);
void SetInts(::onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values);
void SetFloat(::onnx::NodeProto& node, const std::string& name, float value);

// Imports the graph and evaluates its output on `inputs` (the graph's inputs, in order) and the
// initializers' own values.
Result<ir::Literal> ImportAndEvaluate(const ::onnx::ModelProto& model,
                                      std::vector<ir::Literal> inputs,
                                      const ImportOptions& options = {});

// The import's error for the graph, or "" when it imports.
std::string ImportError(const ::onnx::ModelProto& model);

ir::Literal F32(std::vector<int64_t> dims, std::vector<double> values);
std::vector<double> Values(const ir::Literal& literal);

}  // namespace alpa::onnx::testing

#endif  // ALPA_TESTS_ONNX_ONNX_GRAPH_MAKER_H_
