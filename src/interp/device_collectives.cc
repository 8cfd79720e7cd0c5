// Collectives with several participants: the interpreter runs as one device of an SPMD program
// (device_context.h) and hands the data movement to the CollectiveBackend.
//
// The backend moves row-major blocks; this file maps them to dimensions as XLA defines them. With
// P = group size, a device at index i of its group, and d the instruction's dimensions={d}:
//   all-gather      result = concatenate(input of member 0, ..., member P-1) along d.
//   reduce-scatter  input split along d into P blocks; the result is the reduction over the
//                   members of block i.
//   all-to-all      input split along d into P blocks, block j sent to member j; the result is
//                   the blocks received, concatenated along d in member order. (HLO's array form
//                   has one dimension: split and concat are the same.) The tuple form takes P
//                   operands, operand j sent to member j, and returns the P received values.
// Blocks along d are made contiguous by a transpose: [D0.., P*b, ..] -> [P, D0.., b, ..], and
// back. The group of a device is the replica group that contains it (device_context.h: groups
// name device ids); a device in no group, or a group naming a device the program does not run
// on, is an error on that device before anything is sent.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "interp/device_context.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp {

std::string_view CollectiveReductionName(CollectiveReduction reduction) {
  switch (reduction) {
    case CollectiveReduction::kSum:
      return "sum";
    case CollectiveReduction::kMax:
      return "max";
    case CollectiveReduction::kMin:
      return "min";
  }
  return "?";
}

namespace internal {
namespace {

using ir::Literal;
using ir::Opcode;

// The reducer (to_apply) is op(parameter 0, parameter 1), in either order, for op one of add,
// maximum and minimum: the reductions a communicator runs.
Result<CollectiveReduction> ReductionOf(const ir::Instruction& instruction) {
  if (instruction.called_computations().empty() || instruction.to_apply() == nullptr) {
    return InvalidArgument("has no reducer (to_apply=)");
  }
  const ir::Computation& reducer = *instruction.to_apply();
  const ir::Instruction* root = reducer.root();
  const std::vector<ir::Instruction*> parameters = reducer.parameters();
  const bool binary_of_parameters =
      root != nullptr && parameters.size() == 2 && root->operand_count() == 2 &&
      ((root->operand(0) == parameters[0] && root->operand(1) == parameters[1]) ||
       (root->operand(0) == parameters[1] && root->operand(1) == parameters[0]));
  if (binary_of_parameters) {
    switch (root->opcode()) {
      case Opcode::kAdd:
        return CollectiveReduction::kSum;
      case Opcode::kMaximum:
        return CollectiveReduction::kMax;
      case Opcode::kMinimum:
        return CollectiveReduction::kMin;
      default:
        break;
    }
  }
  return Unimplemented(
      "reducer {} is not add, maximum or minimum of its two parameters; cross-device "
      "collectives reduce only by sum, max or min",
      reducer.name());
}

// The ids of all devices, 0 .. N-1.
std::vector<int64_t> AllDevices(const DeviceContext& device) {
  std::vector<int64_t> all(static_cast<size_t>(device.num_partitions));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// The replica group that holds this device (all devices when there are no groups).
Result<std::vector<int64_t>> GroupOf(const ir::Instruction& instruction,
                                     const DeviceContext& device) {
  const std::optional<ir::ReplicaGroups>& groups = instruction.attributes().replica_groups;
  if (!groups.has_value() || groups->groups.empty()) return AllDevices(device);
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& group : groups->groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= device.num_partitions) {
        return InvalidArgument(
            "replica group {{{}}} names device {} but the program runs on {} devices "
            "(0 .. {}); partition it for this device count",
            fmt::join(group, ","), id, device.num_partitions, device.num_partitions - 1);
      }
      if (id == device.partition_id) {
        if (mine != nullptr) {
          return InvalidArgument("device {} is in two replica groups, {{{}}} and {{{}}}", id,
                                 fmt::join(*mine, ","), fmt::join(group, ","));
        }
        mine = &group;
      }
    }
  }
  if (mine == nullptr) {
    return InvalidArgument(
        "device {} of {} is in none of the replica groups {}; every device "
        "must be in one",
        device.partition_id, device.num_partitions, fmt::join(groups->groups, ","));
  }
  return *mine;
}

// `input`'s elements under another shape with the same element count.
Literal Reshaped(const Literal& input, const ir::Shape& shape) {
  Literal result = Literal::CreateZeros(shape);
  ALPA_CHECK(result.size_bytes() == input.size_bytes(), "reshape of {} to {}",
             input.shape().ToString(false), shape.ToString(false));
  if (input.size_bytes() > 0) {
    std::memcpy(result.data(), input.data(), static_cast<size_t>(input.size_bytes()));
  }
  return result;
}

// [D0.., P*b (dimension d), ..] -> [P, D0.., b, ..]: block j along d becomes block j of the
// row-major elements.
Literal BlocksToFront(const Literal& input, int64_t d, int64_t parts) {
  std::vector<int64_t> dims = input.shape().dims();
  const int64_t block = dims[static_cast<size_t>(d)] / parts;
  dims[static_cast<size_t>(d)] = block;
  dims.insert(dims.begin() + d, parts);
  const Literal split = Reshaped(input, ir::Shape::Array(input.shape().dtype(), dims));
  std::vector<int64_t> permutation{d};
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i != d) permutation.push_back(i);
  }
  return Permute(split, permutation);
}

// The inverse: [P, D0.., b, ..] -> [D0.., P*b (dimension d), ..].
Literal BlocksToDimension(const Literal& blocks, int64_t d) {
  const std::vector<int64_t>& dims = blocks.shape().dims();
  std::vector<int64_t> permutation;
  for (int64_t i = 1; i <= d; ++i) permutation.push_back(i);
  permutation.push_back(0);
  for (int64_t i = d + 1; i < static_cast<int64_t>(dims.size()); ++i) permutation.push_back(i);
  const Literal moved = Permute(blocks, permutation);
  std::vector<int64_t> out(dims.begin() + 1, dims.end());
  out[static_cast<size_t>(d)] *= dims[0];
  return Reshaped(moved, ir::Shape::Array(blocks.shape().dtype(), out));
}

Result<int64_t> SplitDimension(const ir::Instruction& instruction, const Literal& operand,
                               int64_t parts, bool must_divide) {
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1 || dimensions[0] < 0 || dimensions[0] >= operand.shape().rank()) {
    return InvalidArgument("dimensions={{{}}} is not one dimension of the operand {}",
                           fmt::join(dimensions, ","), operand.shape().ToString(false));
  }
  const int64_t d = dimensions[0];
  if (must_divide && operand.shape().dim(d) % parts != 0) {
    return InvalidArgument("dimension {} of the operand {} does not split into {} equal blocks", d,
                           operand.shape().ToString(false), parts);
  }
  return d;
}

Literal ArrayOrTuple(std::vector<Literal> values) {
  if (values.size() == 1) return std::move(values[0]);
  return Literal::CreateTuple(std::move(values));
}

std::vector<int64_t> WithDimension(std::vector<int64_t> dims, int64_t d, int64_t size) {
  dims[static_cast<size_t>(d)] = size;
  return dims;
}

Result<Literal> AllReduce(const ir::Instruction& instruction, const Operands& operands,
                          CollectiveGroup group, CollectiveBackend& backend) {
  ALPA_ASSIGN_OR_RETURN(const CollectiveReduction reduction, ReductionOf(instruction));
  std::vector<Literal> results;
  for (const Literal* operand : operands) {
    Literal output = Literal::CreateZeros(operand->shape());
    ALPA_RETURN_IF_ERROR(backend.AllReduce(group, reduction, *operand, output));
    results.push_back(std::move(output));
  }
  return ArrayOrTuple(std::move(results));
}

Result<Literal> AllGather(const ir::Instruction& instruction, const Operands& operands,
                          CollectiveGroup group, CollectiveBackend& backend) {
  const int64_t parts = static_cast<int64_t>(group.size());
  std::vector<Literal> results;
  for (const Literal* operand : operands) {
    // A scalar beside other operands is PyTorch/XLA's ordering token: it passes through.
    if (operands.size() > 1 && operand->shape().rank() == 0) {
      results.push_back(*operand);
      continue;
    }
    ALPA_ASSIGN_OR_RETURN(const int64_t d, SplitDimension(instruction, *operand, parts, false));
    std::vector<int64_t> dims = operand->shape().dims();
    dims.insert(dims.begin(), parts);
    Literal blocks = Literal::CreateZeros(ir::Shape::Array(operand->shape().dtype(), dims));
    ALPA_RETURN_IF_ERROR(backend.AllGather(group, *operand, blocks));
    results.push_back(BlocksToDimension(blocks, d));
  }
  return ArrayOrTuple(std::move(results));
}

Result<Literal> ReduceScatter(const ir::Instruction& instruction, const Operands& operands,
                              CollectiveGroup group, CollectiveBackend& backend) {
  ALPA_ASSIGN_OR_RETURN(const CollectiveReduction reduction, ReductionOf(instruction));
  const int64_t parts = static_cast<int64_t>(group.size());
  std::vector<Literal> results;
  for (const Literal* operand : operands) {
    if (operands.size() > 1 && operand->shape().rank() == 0) {
      results.push_back(*operand);
      continue;
    }
    ALPA_ASSIGN_OR_RETURN(const int64_t d, SplitDimension(instruction, *operand, parts, true));
    const Literal blocks = BlocksToFront(*operand, d, parts);
    const ir::Shape& shape = operand->shape();
    Literal output = Literal::CreateZeros(
        ir::Shape::Array(shape.dtype(), WithDimension(shape.dims(), d, shape.dim(d) / parts)));
    ALPA_RETURN_IF_ERROR(backend.ReduceScatter(group, reduction, blocks, output));
    results.push_back(std::move(output));
  }
  return ArrayOrTuple(std::move(results));
}

Result<Literal> AllToAll(const ir::Instruction& instruction, const Operands& operands,
                         CollectiveGroup group, CollectiveBackend& backend) {
  const int64_t parts = static_cast<int64_t>(group.size());
  if (!instruction.attributes().dimensions.empty()) {
    ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
    ALPA_ASSIGN_OR_RETURN(const int64_t d, SplitDimension(instruction, *operands[0], parts, true));
    const Literal blocks = BlocksToFront(*operands[0], d, parts);
    Literal received = Literal::CreateZeros(blocks.shape());
    ALPA_RETURN_IF_ERROR(backend.AllToAll(group, blocks, received));
    return BlocksToDimension(received, d);
  }
  // Tuple form: operand j goes to member j. The backend moves equal blocks, so the operands
  // must have one shape.
  if (static_cast<int64_t>(operands.size()) != parts) {
    return InvalidArgument("the tuple form of all-to-all over {} devices needs {} operands, has {}",
                           parts, parts, operands.size());
  }
  const ir::Shape& shape = operands[0]->shape();
  for (const Literal* operand : operands) {
    if (!operand->shape().Compatible(shape)) {
      return Unimplemented("all-to-all operands of different shapes ({} and {})",
                           shape.ToString(false), operand->shape().ToString(false));
    }
  }
  std::vector<int64_t> dims = shape.dims();
  dims.insert(dims.begin(), parts);
  Literal blocks = Literal::CreateZeros(ir::Shape::Array(shape.dtype(), dims));
  const size_t block_bytes = static_cast<size_t>(operands[0]->size_bytes());
  for (size_t j = 0; j < operands.size(); ++j) {
    if (block_bytes > 0)
      std::memcpy(blocks.data() + j * block_bytes, operands[j]->data(), block_bytes);
  }
  Literal received = Literal::CreateZeros(blocks.shape());
  ALPA_RETURN_IF_ERROR(backend.AllToAll(group, blocks, received));
  std::vector<Literal> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    Literal value = Literal::CreateZeros(shape);
    if (block_bytes > 0) std::memcpy(value.data(), received.data() + i * block_bytes, block_bytes);
    results.push_back(std::move(value));
  }
  return Literal::CreateTuple(std::move(results));
}

Result<Literal> CollectivePermute(const ir::Instruction& instruction, const Operands& operands,
                                  const DeviceContext& device, CollectiveBackend& backend) {
  if (operands.size() != 1) {
    return Unimplemented("collective-permute with {} operands (the in-place form) on devices",
                         operands.size());
  }
  std::vector<SourceTargetPair> pairs;
  for (const auto& [source, target] : instruction.attributes().source_target_pairs) {
    for (int64_t id : {source, target}) {
      if (id < 0 || id >= device.num_partitions) {
        return InvalidArgument(
            "source_target_pairs name device {} but the program runs on {} "
            "devices",
            id, device.num_partitions);
      }
    }
    pairs.emplace_back(source, target);
  }
  // Every device runs the permute, also those in no pair (they receive zeros), so its group is
  // all devices.
  const std::vector<int64_t> all = AllDevices(device);
  Literal output = Literal::CreateZeros(operands[0]->shape());
  ALPA_RETURN_IF_ERROR(backend.CollectivePermute(all, pairs, *operands[0], output));
  return output;
}

}  // namespace

Result<Literal> EvaluateDeviceCollective(const ir::Instruction& instruction,
                                         const Operands& operands, const DeviceContext& device) {
  if (device.collectives == nullptr) {
    return FailedPrecondition(
        "the program runs on {} devices but no collective backend was given; run it with "
        "runtime::RunSpmdProgram or pass DeviceContext::collectives",
        device.num_partitions);
  }
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  CollectiveBackend& backend = *device.collectives;
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kCollectivePermute || opcode == Opcode::kCollectivePermuteStart) {
    return CollectivePermute(instruction, operands, device, backend);
  }
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> group, GroupOf(instruction, device));
  switch (opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return AllReduce(instruction, operands, group, backend);
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      return AllGather(instruction, operands, group, backend);
    case Opcode::kReduceScatter:
      return ReduceScatter(instruction, operands, group, backend);
    case Opcode::kAllToAll:
      return AllToAll(instruction, operands, group, backend);
    case Opcode::kCollectiveBroadcast: {
      // XLA: the first device of each group is the source.
      ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
      Literal output = Literal::CreateZeros(operands[0]->shape());
      ALPA_RETURN_IF_ERROR(backend.Broadcast(group, group[0], *operands[0], output));
      return output;
    }
    default:
      return Unimplemented("{} is not a collective the devices run", ir::OpcodeName(opcode));
  }
}

}  // namespace internal
}  // namespace alpa::interp
