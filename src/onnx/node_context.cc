#include "onnx/node_context.h"

#include <algorithm>
#include <limits>

namespace alpa::onnx {

NodeContext::NodeContext(const ::onnx::NodeProto& node, int64_t opset,
                         ir::ComputationBuilder& builder, std::map<std::string, Value>& values,
                         const std::set<std::string>& consumed)
    : node_(node), opset_(opset), builder_(builder), values_(values), consumed_(consumed) {}

bool NodeContext::output_used(int i) const {
  return i < node_.output_size() && !node_.output(i).empty() &&
         consumed_.count(node_.output(i)) > 0;
}

bool NodeContext::has_input(int i) const {
  return i < node_.input_size() && !node_.input(i).empty();
}

const Value& NodeContext::input(int i) const {
  // The import checked that every named input exists before calling the converter.
  return values_.at(node_.input(i));
}

ir::Instruction* NodeContext::Input(int i) {
  Value& value = values_.at(node_.input(i));
  if (value.instruction == nullptr) value.instruction = builder_.Constant(*value.known);
  return value.instruction;
}

Result<std::vector<int64_t>> NodeContext::KnownInts(int i) const {
  if (!has_input(i)) return Error("input {} is missing", i);
  const Value& value = input(i);
  if (!value.known || !ir::IsInteger(value.shape.dtype())) {
    return Error(
        "input {} ('{}') must be integers known at import (a constant, or shape arithmetic on "
        "static shapes), and it is computed from the model's inputs; our shapes are static, so "
        "export with static shapes",
        i, node_.input(i));
  }
  return LiteralInts(*value.known);
}

const ::onnx::AttributeProto* NodeContext::Attribute(const std::string& name) const {
  for (const ::onnx::AttributeProto& attribute : node_.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t NodeContext::Int(const std::string& name, int64_t fallback) const {
  const ::onnx::AttributeProto* attribute = Attribute(name);
  return attribute != nullptr ? attribute->i() : fallback;
}

float NodeContext::Float(const std::string& name, float fallback) const {
  const ::onnx::AttributeProto* attribute = Attribute(name);
  return attribute != nullptr ? attribute->f() : fallback;
}

std::vector<int64_t> NodeContext::Ints(const std::string& name,
                                       std::vector<int64_t> fallback) const {
  const ::onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return fallback;
  return {attribute->ints().begin(), attribute->ints().end()};
}

std::optional<std::string> NodeContext::String(const std::string& name) const {
  const ::onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return std::nullopt;
  return attribute->s();
}

void NodeContext::SetOutput(int i, ir::Instruction* instruction) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  Value value;
  value.instruction = instruction;
  if (instruction != nullptr) value.shape = instruction->shape();
  values_[node_.output(i)] = std::move(value);
}

void NodeContext::SetKnownOutput(int i, ir::Literal known) {
  if (i >= node_.output_size() || node_.output(i).empty()) return;
  Value value;
  value.shape = known.shape();
  value.known = std::move(known);
  values_[node_.output(i)] = std::move(value);
}

Result<int64_t> NodeContext::Axis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    return Error("axis {} is out of range for rank {}", axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                  const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    dims[i] = da == 1 ? db : da;
  }
  return dims;
}

ir::Instruction* BroadcastTo(ir::ComputationBuilder& b, ir::Instruction* x,
                             const std::vector<int64_t>& dims) {
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>& from = x->shape().dims();
  if (from == dims) return x;
  // Keep the dimensions that match their place in `dims`; the stretched 1s are dropped by a
  // reshape first, as XLA's broadcast maps each operand dimension to one of equal size.
  const size_t offset = dims.size() - from.size();
  std::vector<int64_t> kept_dims, mapped;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == dims[offset + i]) {
      kept_dims.push_back(from[i]);
      mapped.push_back(static_cast<int64_t>(offset + i));
    }
  }
  if (kept_dims.size() != from.size()) x = b.Reshape(x, kept_dims);
  return b.Broadcast(x, dims, mapped);
}

ir::Instruction* Filled(ir::ComputationBuilder& b, ir::DType dtype, double value,
                        const std::vector<int64_t>& dims) {
  return b.Broadcast(b.ConstantScalar(dtype, value), dims, {});
}

ir::Instruction* ReduceOver(ir::ComputationBuilder& b, ir::Opcode opcode, ir::Instruction* x,
                            const std::vector<int64_t>& dimensions) {
  if (x == nullptr) return nullptr;
  const ir::DType dtype = x->shape().dtype();
  if (opcode == ir::Opcode::kAdd) return b.Sum(x, dimensions);
  ir::Instruction* init = b.ConstantScalar(dtype, -std::numeric_limits<double>::infinity());
  return b.Reduce(x, init, dimensions, b.module_builder().ScalarReducer(opcode, dtype));
}

ir::Instruction* BroadcastBack(ir::ComputationBuilder& b, ir::Instruction* reduced,
                               const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& reduced_dimensions) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (std::find(reduced_dimensions.begin(), reduced_dimensions.end(), d) ==
        reduced_dimensions.end()) {
      kept.push_back(d);
    }
  }
  return b.Broadcast(reduced, dims, kept);
}

ir::Literal IntLiteral(const std::vector<int64_t>& values, std::vector<int64_t> dims) {
  return ir::Literal::FromInts(ir::Shape::Array(ir::DType::kS64, std::move(dims)), values);
}

std::vector<int64_t> LiteralInts(const ir::Literal& literal) {
  std::vector<int64_t> values(static_cast<size_t>(literal.element_count()));
  for (int64_t i = 0; i < literal.element_count(); ++i)
    values[static_cast<size_t>(i)] = literal.GetInt(i);
  return values;
}

ir::Literal Reshaped(const ir::Literal& literal, std::vector<int64_t> dims) {
  ir::Literal reshaped =
      ir::Literal::CreateZeros(ir::Shape::Array(literal.shape().dtype(), std::move(dims)));
  std::copy(literal.data(), literal.data() + literal.size_bytes(), reshaped.data());
  return reshaped;
}

}  // namespace alpa::onnx
