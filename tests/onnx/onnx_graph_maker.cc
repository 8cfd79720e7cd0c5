#include "tests/onnx/onnx_graph_maker.h"

#include "interp/evaluator.h"
#include "ir/builder.h"

namespace alpa::onnx::testing {

GraphMaker::GraphMaker(int64_t opset) {
  model_.set_ir_version(8);
  ::onnx::OperatorSetIdProto* set = model_.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

GraphMaker& GraphMaker::Input(const std::string& name, std::vector<int64_t> dims, int32_t type) {
  ::onnx::ValueInfoProto* input = model_.mutable_graph()->add_input();
  input->set_name(name);
  ::onnx::TypeProto::Tensor* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  return *this;
}

GraphMaker& GraphMaker::Initializer(const std::string& name, std::vector<int64_t> dims,
                                    std::vector<float> values) {
  ::onnx::TensorProto* tensor = model_.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  for (float v : values) tensor->add_float_data(v);
  return *this;
}

GraphMaker& GraphMaker::IntInitializer(const std::string& name, std::vector<int64_t> dims,
                                       std::vector<int64_t> values) {
  ::onnx::TensorProto* tensor = model_.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t v : values) tensor->add_int64_data(v);
  return *this;
}

::onnx::NodeProto& GraphMaker::Node(const std::string& op, std::vector<std::string> inputs,
                                    std::vector<std::string> outputs) {
  ::onnx::NodeProto* node = model_.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name("/" + op + "_" + std::to_string(nodes_++));
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return *node;
}

GraphMaker& GraphMaker::Output(const std::string& name) {
  model_.mutable_graph()->add_output()->set_name(name);
  return *this;
}

void SetInt(::onnx::NodeProto& node, const std::string& name, int64_t value) {
  ::onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetInts(::onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  ::onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void SetFloat(::onnx::NodeProto& node, const std::string& name, float value) {
  ::onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
}

Result<ir::Literal> ImportAndEvaluate(const ::onnx::ModelProto& model,
                                      std::vector<ir::Literal> inputs,
                                      const ImportOptions& options) {
  ALPA_ASSIGN_OR_RETURN(OnnxFile file, CheckOnnxModel(model, "test.onnx", ""));
  ir::ModuleBuilder mb("test");
  ir::ComputationBuilder b = mb.NewComputation("main");
  ALPA_ASSIGN_OR_RETURN(ImportedGraph graph, ImportGraph(file, b, options));
  ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b.Build(graph.output));
  ALPA_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, mb.Build(entry));
  ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> weights, ReadWeights(file, graph));
  for (ir::Literal& weight : weights) inputs.push_back(std::move(weight));
  return interp::EvaluateModule(*module, std::move(inputs));
}

std::string ImportError(const ::onnx::ModelProto& model) {
  Result<OnnxFile> file = CheckOnnxModel(model, "test.onnx", "");
  if (!file.ok()) return file.status().message();
  ir::ModuleBuilder mb("test");
  ir::ComputationBuilder b = mb.NewComputation("main");
  Result<ImportedGraph> graph = ImportGraph(*file, b, {});
  return graph.ok() ? "" : graph.status().message();
}

ir::Literal F32(std::vector<int64_t> dims, std::vector<double> values) {
  return ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, std::move(dims)), values);
}

std::vector<double> Values(const ir::Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetDouble(i));
  return values;
}

}  // namespace alpa::onnx::testing
