#include "sharding/parallel_methods.h"

#include <fmt/format.h>

#include <utility>

namespace alpa::sharding {
namespace {

// The instruction that produces element `index` of tuple instruction `tuple`, looking through
// nested tuples and get-tuple-elements of tuples (views, not nodes of the strategy graph).
const ir::Instruction* ElementProducer(const ir::Instruction& tuple, int64_t index) {
  const ir::Instruction* value = tuple.operand(index);
  while (value->opcode() == ir::Opcode::kGetTupleElement &&
         value->operand(0)->opcode() == ir::Opcode::kTuple) {
    value = value->operand(0)->operand(value->attributes().tuple_index);
  }
  return value;
}

// Axis 0 over the largest dimension that N = devices divides (the first on a tie); replicated
// when none does. Weights and their optimizer state have the same shape, so they split alike.
ShardingSpec SplitLargestDivisible(const std::vector<int64_t>& dims, int64_t devices) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t best = -1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = dims[static_cast<size_t>(d)];
    if (size % devices == 0 && size >= devices &&
        (best < 0 || size > dims[static_cast<size_t>(best)])) {
      best = d;
    }
  }
  return best < 0 ? ShardingSpec::Replicated(rank) : ShardingSpec::SplitDim(rank, best, {0});
}

}  // namespace

std::string_view ParallelMethodName(ParallelMethod method) {
  switch (method) {
    case ParallelMethod::kShard:
      return "shard";
    case ParallelMethod::kData:
      return "data";
    case ParallelMethod::kZero2:
      return "zero2";
    case ParallelMethod::kZero3:
      return "zero3";
  }
  return "?";
}

Result<ParallelMethod> ParseParallelMethod(std::string_view name) {
  for (ParallelMethod method : {ParallelMethod::kShard, ParallelMethod::kData,
                                ParallelMethod::kZero2, ParallelMethod::kZero3}) {
    if (ParallelMethodName(method) == name) return method;
  }
  return InvalidArgument("unknown parallel method '{}': use shard, data, zero2 or zero3", name);
}

Result<std::vector<MethodParameter>> StepParameters(
    const ir::Computation& entry, const std::vector<cost::ParameterRole>& roles,
    const std::vector<int64_t>& output_of_parameter) {
  const ir::Instruction& root = *entry.root();
  std::vector<MethodParameter> parameters;
  for (const ir::Instruction* parameter : entry.parameters()) {
    const size_t i = parameters.size();
    MethodParameter& described = parameters.emplace_back();
    described.name = parameter->name();
    // A tuple-shaped parameter has no dimensions to split: left to the solver.
    if (!parameter->shape().IsArray()) continue;
    described.dims = parameter->shape().dims();
    if (i < roles.size()) described.role = roles[i];
    const int64_t output = i < output_of_parameter.size() ? output_of_parameter[i] : -1;
    if (output < 0) continue;
    if (root.opcode() != ir::Opcode::kTuple || output >= root.operand_count()) {
      return InvalidArgument(
          "parameter %{} is updated by output {} of the step, but the root %{} has {}",
          parameter->name(), output, root.name(),
          root.opcode() == ir::Opcode::kTuple ? fmt::format("{} elements", root.operand_count())
                                              : std::string("no tuple elements"));
    }
    described.next_value = ElementProducer(root, output)->name();
  }
  return parameters;
}

Result<std::map<std::string, LeafSpecs>> MethodPins(
    ParallelMethod method, const std::vector<int64_t>& mesh_shape,
    const std::vector<MethodParameter>& parameters) {
  std::map<std::string, LeafSpecs> pins;
  if (method == ParallelMethod::kShard) return pins;
  if (mesh_shape.size() != 1) {
    return InvalidArgument(
        "method {} runs on the 1-D mesh of all devices (data parallel over axis 0), not on a "
        "mesh of {} axes; use --method shard for other meshes",
        ParallelMethodName(method), mesh_shape.size());
  }
  const int64_t devices = mesh_shape[0];
  // On one device a tile is the whole array, and the strategies offer only replicated layouts.
  const bool split = devices > 1;
  bool any_batch = false;
  for (const MethodParameter& parameter : parameters) {
    const int64_t rank = static_cast<int64_t>(parameter.dims.size());
    ShardingSpec spec = ShardingSpec::Replicated(rank);
    switch (parameter.role) {
      case cost::ParameterRole::kBatch:
        // A scalar batch parameter (a flag, a seed) has nothing to split.
        if (rank == 0) continue;
        if (parameter.dims[0] % devices != 0) {
          return InvalidArgument(
              "method {}: batch parameter %{} has {} rows in dimension 0, which do not divide "
              "among {} devices; choose a batch that is a multiple of {}",
              ParallelMethodName(method), parameter.name, parameter.dims[0], devices, devices);
        }
        if (split) spec = ShardingSpec::SplitDim(rank, 0, {0});
        any_batch = true;
        break;
      case cost::ParameterRole::kWeight:
        if (split && method == ParallelMethod::kZero3) {
          spec = SplitLargestDivisible(parameter.dims, devices);
        }
        break;
      case cost::ParameterRole::kOptimizerState:
        if (split && method != ParallelMethod::kData) {
          spec = SplitLargestDivisible(parameter.dims, devices);
        }
        break;
      case cost::ParameterRole::kOther:
        continue;
    }
    pins[parameter.name] = {spec};
    if (!parameter.next_value.empty()) pins[parameter.next_value] = {spec};
  }
  if (!any_batch) {
    return InvalidArgument(
        "method {} splits the batch parameters over the devices, but the step has none with "
        "dimensions",
        ParallelMethodName(method));
  }
  return pins;
}

}  // namespace alpa::sharding
