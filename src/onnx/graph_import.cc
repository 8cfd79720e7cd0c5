#include "onnx/graph_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "onnx/node_context.h"

namespace alpa::onnx {
namespace {

const ConverterTable& Converters() {
  static const ConverterTable table = [] {
    ConverterTable converters;
    AddElementwiseConverters(converters);
    AddTensorConverters(converters);
    AddNetworkConverters(converters);
    return converters;
  }();
  return table;
}

// HLO names take letters, digits, '_', '.' and '-'; ONNX names may hold '/' or ':'.
std::string InstructionName(const std::string& onnx_name) {
  std::string name = onnx_name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  return name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ? "v" + name : name;
}

// The instructions `root` depends on through floating-point values only (those a gradient can
// reach): not through a comparison, a select's predicate or an index.
std::set<const ir::Instruction*> DifferentiablyReached(const ir::Instruction* root) {
  std::set<const ir::Instruction*> reached = {root};
  std::vector<const ir::Instruction*> stack = {root};
  while (!stack.empty()) {
    const ir::Instruction* instruction = stack.back();
    stack.pop_back();
    if (!ir::IsFloating(instruction->shape().dtype())) continue;
    for (const ir::Instruction* operand : instruction->operands()) {
      if (ir::IsFloating(operand->shape().dtype()) && reached.insert(operand).second) {
        stack.push_back(operand);
      }
    }
  }
  return reached;
}

// One pass over the graph. `trained` says which initializers are weight parameters; the
// others are constants. The first pass makes every floating-point initializer a weight, to
// learn which the output depends on; the second builds the module with those.
class GraphBuilder {
 public:
  GraphBuilder(const OnnxFile& file, ir::ComputationBuilder& b, const ImportOptions& options)
      : file_(file), graph_(file.model.graph()), b_(b), options_(options) {
    for (const ::onnx::NodeProto& node : graph_.node()) {
      for (const std::string& input : node.input()) consumed_.insert(input);
    }
    for (const ::onnx::ValueInfoProto& output : graph_.output()) consumed_.insert(output.name());
  }

  Result<ImportedGraph> Build(const std::set<int>& trained) {
    ALPA_RETURN_IF_ERROR(AddInputs());
    ALPA_RETURN_IF_ERROR(AddInitializers(trained));
    for (const ::onnx::NodeProto& node : graph_.node()) {
      ALPA_RETURN_IF_ERROR(Convert(node));
    }
    if (graph_.output_size() != 1) {
      return InvalidArgument(
          "{}: the graph has {} outputs, and the loss is built on one; export the model with a "
          "single output",
          file_.path, graph_.output_size());
    }
    auto output = values_.find(graph_.output(0).name());
    if (output == values_.end()) {
      return InvalidArgument("{}: the graph's output '{}' is not produced by any node", file_.path,
                             graph_.output(0).name());
    }
    imported_.output = output->second.instruction != nullptr ? output->second.instruction
                                                             : b_.Constant(*output->second.known);
    if (!ir::IsFloating(imported_.output->shape().dtype())) {
      return InvalidArgument("{}: the output '{}' is {}, not floating point", file_.path,
                             graph_.output(0).name(), imported_.output->shape().ToString());
    }
    return std::move(imported_);
  }

 private:
  Status AddInputs() {
    std::set<std::string> initializers;
    for (const ::onnx::TensorProto& tensor : graph_.initializer())
      initializers.insert(tensor.name());
    for (const ::onnx::ValueInfoProto& input : graph_.input()) {
      if (initializers.count(input.name()) > 0) continue;  // an initializer listed as input
      const std::string what = fmt::format("{}: input '{}'", file_.path, input.name());
      if (!input.type().has_tensor_type()) return InvalidArgument("{} is not a tensor", what);
      const ::onnx::TypeProto::Tensor& type = input.type().tensor_type();
      ALPA_ASSIGN_OR_RETURN(ir::DType dtype, ElementType(type.elem_type(), what));
      std::vector<int64_t> dims;
      for (int d = 0; d < type.shape().dim_size(); ++d) {
        const ::onnx::TensorShapeProto::Dimension& dim = type.shape().dim(d);
        if (d == 0 && options_.batch) {
          dims.push_back(*options_.batch);
        } else if (dim.has_dim_value()) {
          dims.push_back(dim.dim_value());
        } else {
          return InvalidArgument(
              "{}: dimension {} is symbolic ('{}'); our shapes are static: give the batch "
              "(--batch) "
              "for dimension 0, and export the others with fixed sizes",
              what, d, dim.dim_param());
        }
      }
      const auto number = static_cast<int64_t>(imported_.inputs.size());
      ir::Instruction* parameter =
          b_.Parameter(number, ir::Shape::Array(dtype, dims), InstructionName(input.name()));
      values_[input.name()] = {parameter, std::nullopt, parameter->shape()};
      imported_.inputs.push_back(parameter);
      imported_.input_names.push_back(input.name());
    }
    return b_.status();
  }

  Status AddInitializers(const std::set<int>& trained) {
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const ::onnx::TensorProto& tensor = graph_.initializer(i);
      if (consumed_.count(tensor.name()) == 0) continue;
      ALPA_ASSIGN_OR_RETURN(ir::Shape shape, TensorShape(tensor));
      if (trained.count(i) > 0) {
        const auto number =
            static_cast<int64_t>(imported_.inputs.size() + imported_.weights.size());
        ir::Instruction* parameter = b_.Parameter(number, shape, InstructionName(tensor.name()));
        values_[tensor.name()] = {parameter, std::nullopt, shape};
        imported_.weights.push_back(parameter);
        imported_.weight_names.push_back(tensor.name());
        imported_.weight_initializers.push_back(i);
      } else {
        Result<ir::Literal> value = TensorValue(tensor, file_.directory);
        if (!value.ok()) return value.status().WithContext(file_.path);
        values_[tensor.name()] = {nullptr, std::move(value).value(), shape};
      }
    }
    return b_.status();
  }

  Status Convert(const ::onnx::NodeProto& node) {
    const std::string where = fmt::format("{}: node '{}' ({}, opset {})", file_.path, node.name(),
                                          node.op_type(), file_.opset);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return Unimplemented("{}: operator domain '{}' is not supported; only the default domain",
                           where, node.domain());
    }
    auto converter = Converters().find(node.op_type());
    if (converter == Converters().end()) {
      return Unimplemented("{}: the ONNX import does not support operator '{}'; it supports {}",
                           where, node.op_type(), fmt::join(SupportedOperators(), ", "));
    }
    for (const std::string& input : node.input()) {
      if (!input.empty() && values_.count(input) == 0) {
        return InvalidArgument("{}: input '{}' is produced by no earlier node", where, input);
      }
    }
    if (node.op_type() == "Dropout") Note("Dropout runs as identity (no dropout in training)");
    NodeContext context(node, file_.opset, b_, values_, consumed_);
    Status converted = converter->second(context);
    if (!converted.ok()) return converted.WithContext(file_.path);
    if (!b_.status().ok()) return b_.status().WithContext(where);
    for (int i = 0; i < node.output_size(); ++i) {
      if (context.output_used(i) && values_.count(node.output(i)) == 0) {
        return Internal("{}: the converter set no value for output {}", where, i);
      }
    }
    return Status::Ok();
  }

  void Note(const std::string& note) {
    if (std::find(imported_.notes.begin(), imported_.notes.end(), note) == imported_.notes.end()) {
      imported_.notes.push_back(note);
    }
  }

  const OnnxFile& file_;
  const ::onnx::GraphProto& graph_;
  ir::ComputationBuilder& b_;
  const ImportOptions& options_;
  std::set<std::string> consumed_;
  std::map<std::string, Value> values_;
  ImportedGraph imported_;
};

// The initializers the output depends on through floating-point values: a scratch import with
// every floating-point initializer a parameter.
Result<std::set<int>> TrainedInitializers(const OnnxFile& file, const ImportOptions& options) {
  std::set<int> candidates;
  for (int i = 0; i < file.model.graph().initializer_size(); ++i) {
    Result<ir::Shape> shape = TensorShape(file.model.graph().initializer(i));
    if (!shape.ok()) return shape.status().WithContext(file.path);
    if (ir::IsFloating(shape->dtype())) candidates.insert(i);
  }
  ir::ModuleBuilder scratch("scratch");
  ir::ComputationBuilder b = scratch.NewComputation("scratch");
  ALPA_ASSIGN_OR_RETURN(ImportedGraph graph, GraphBuilder(file, b, options).Build(candidates));
  const std::set<const ir::Instruction*> reached = DifferentiablyReached(graph.output);
  std::set<int> trained;
  for (size_t w = 0; w < graph.weights.size(); ++w) {
    if (reached.count(graph.weights[w]) > 0) trained.insert(graph.weight_initializers[w]);
  }
  return trained;
}

}  // namespace

Result<ImportedGraph> ImportGraph(const OnnxFile& file, ir::ComputationBuilder& builder,
                                  const ImportOptions& options) {
  if (options.batch && *options.batch < 1) {
    return InvalidArgument("batch {}: it must be at least 1", *options.batch);
  }
  ALPA_ASSIGN_OR_RETURN(std::set<int> trained, TrainedInitializers(file, options));
  return GraphBuilder(file, builder, options).Build(trained);
}

Result<std::vector<ir::Literal>> ReadWeights(const OnnxFile& file, const ImportedGraph& graph) {
  std::vector<ir::Literal> weights;
  for (int i : graph.weight_initializers) {
    Result<ir::Literal> value = TensorValue(file.model.graph().initializer(i), file.directory);
    if (!value.ok()) return value.status().WithContext(file.path);
    weights.push_back(std::move(value).value());
  }
  return weights;
}

std::vector<std::string> SupportedOperators() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : Converters()) names.push_back(name);
  return names;
}

}  // namespace alpa::onnx
