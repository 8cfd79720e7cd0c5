// What an operator's converter works with: the ONNX node, its inputs as values of the module
// being built, its attributes, and where its outputs go. A converter per operator (one file per
// family: elementwise_ops.cc, tensor_ops.cc, network_ops.cc) turns a node into IR instructions,
// or, for the shape arithmetic that exports carry (Shape, Gather, Concat, ... on shapes), into a
// value known at import: our shapes are static, so what a Reshape is given as a shape must fold
// to constants here.
#ifndef ALPA_ONNX_NODE_CONTEXT_H_
#define ALPA_ONNX_NODE_CONTEXT_H_

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::onnx {

// One value of the graph during the import.
struct Value {
  ir::Instruction* instruction = nullptr;  // null while a known value is not needed in the module
  std::optional<ir::Literal> known;        // a constant, or shape arithmetic folded at import
  ir::Shape shape;
};

class NodeContext {
 public:
  // `consumed`: the names of the values that some node or the graph's outputs read.
  NodeContext(const ::onnx::NodeProto& node, int64_t opset, ir::ComputationBuilder& builder,
              std::map<std::string, Value>& values, const std::set<std::string>& consumed);

  const ::onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  ir::ComputationBuilder& b() { return builder_; }

  // Inputs. An optional input left out is absent (an empty name or past the end).
  bool has_input(int i) const;
  const Value& input(int i) const;
  const ir::Shape& input_shape(int i) const { return input(i).shape; }
  // The input as an instruction of the module (a known value becomes a constant).
  ir::Instruction* Input(int i);
  // The input's integer values, which must be known at import (a shape, axes, pads).
  Result<std::vector<int64_t>> KnownInts(int i) const;
  bool IsKnown(int i) const { return has_input(i) && input(i).known.has_value(); }

  // Attributes, with the default ONNX gives them.
  int64_t Int(const std::string& name, int64_t fallback) const;
  float Float(const std::string& name, float fallback) const;
  std::vector<int64_t> Ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::optional<std::string> String(const std::string& name) const;
  const ::onnx::AttributeProto* Attribute(const std::string& name) const;

  // Outputs. An instruction that failed to build (null) leaves the builder's error to report.
  int output_count() const { return node_.output_size(); }
  // Whether output i exists and a later node or the graph's outputs read it.
  bool output_used(int i) const;
  void SetOutput(int i, ir::Instruction* instruction);
  void SetKnownOutput(int i, ir::Literal value);

  // "node '/blocks.0/attn/Reshape' (Reshape, opset 17): <message>".
  template <typename... Args>
  Status Error(fmt::format_string<Args...> format, Args&&... args) const {
    return InvalidArgument("node '{}' ({}, opset {}): {}", node_.name(), node_.op_type(), opset_,
                           fmt::format(format, std::forward<Args>(args)...));
  }

  // A dimension index in [-rank, rank) as one in [0, rank).
  Result<int64_t> Axis(int64_t axis, int64_t rank) const;

 private:
  const ::onnx::NodeProto& node_;
  int64_t opset_;
  ir::ComputationBuilder& builder_;
  std::map<std::string, Value>& values_;
  const std::set<std::string>& consumed_;
};

using Converter = Status (*)(NodeContext&);
using ConverterTable = std::map<std::string, Converter>;

// The converters of each family, added to `table` under their ONNX operator names.
void AddElementwiseConverters(ConverterTable& table);
void AddTensorConverters(ConverterTable& table);
void AddNetworkConverters(ConverterTable& table);

// Shared by the converters.
// numpy's broadcast of two shapes' dimensions; nullopt where they do not broadcast.
std::optional<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                  const std::vector<int64_t>& b);
// x broadcast to `dims` the numpy way (trailing dimensions aligned, 1s stretched).
ir::Instruction* BroadcastTo(ir::ComputationBuilder& b, ir::Instruction* x,
                             const std::vector<int64_t>& dims);
// A scalar of `dtype` broadcast to `dims`.
ir::Instruction* Filled(ir::ComputationBuilder& b, ir::DType dtype, double value,
                        const std::vector<int64_t>& dims);
// The reduction of x over `dimensions` with `opcode` (add or maximum), and the result broadcast
// back to x's shape (the reduced dimensions as size 1 and stretched).
ir::Instruction* ReduceOver(ir::ComputationBuilder& b, ir::Opcode opcode, ir::Instruction* x,
                            const std::vector<int64_t>& dimensions);
ir::Instruction* BroadcastBack(ir::ComputationBuilder& b, ir::Instruction* reduced,
                               const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& reduced_dimensions);
// An s64 literal of `values` with `dims`.
ir::Literal IntLiteral(const std::vector<int64_t>& values, std::vector<int64_t> dims);
std::vector<int64_t> LiteralInts(const ir::Literal& literal);
// `literal`'s elements in the same order under new dimensions (a reshape of a known value).
ir::Literal Reshaped(const ir::Literal& literal, std::vector<int64_t> dims);

}  // namespace alpa::onnx

#endif  // ALPA_ONNX_NODE_CONTEXT_H_
