// Collectives with one participant, async wrappers, and custom-call.
//
// A program evaluated on several devices (EvaluateModule with a DeviceContext of more than one
// partition) sends every collective to device_collectives.cc. Otherwise the interpreter is one
// device (partition 0, replica 0). With one participant every collective is the identity:
// all-reduce reduces one value, all-gather / reduce-scatter / all-to-all move a
// single shard, collective-broadcast keeps its value. collective-permute delivers the device's
// own value with a (0,0) pair; with no pairs nothing arrives and the result is zeros (XLA).
// A collective whose replica groups have more than one member, whose source_target_pairs name
// another device, or whose result shape shows several shards, cannot run on one device and is
// an error.
//
// -start/-done halves: a -start whose shape is a tuple holds (operands, result, context...); the
// matching -done takes the result out of it. Non-tuple -start values are the result itself.
#include <utility>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;
using ir::Opcode;

bool IsDone(Opcode opcode) {
  return opcode == Opcode::kAllGatherDone || opcode == Opcode::kAllReduceDone ||
         opcode == Opcode::kCollectivePermuteDone || opcode == Opcode::kAsyncDone ||
         opcode == Opcode::kCopyDone;
}

// The value a -done instruction takes out of its -start operand.
Result<Literal> Done(const ir::Instruction& instruction, const Literal& started) {
  const ir::Shape& shape = instruction.shape();
  if (started.shape().Compatible(shape)) return started;
  if (started.shape().IsTuple() && started.tuple_elements().size() >= 2 &&
      started.tuple_element(1).shape().Compatible(shape)) {
    return started.tuple_element(1);
  }
  return InvalidArgument("cannot take a {} result out of {}", shape.ToString(false),
                         started.shape().ToString(false));
}

// Wraps a computed `value` for a -start whose result is (operands, value, context...).
Result<Literal> Started(const ir::Instruction& instruction, const Operands& operands,
                        Literal value) {
  const ir::Shape& shape = instruction.shape();
  if (value.shape().Compatible(shape)) return value;
  if (!shape.IsTuple() || shape.tuple_size() < 2 ||
      !shape.tuple_shape(1).Compatible(value.shape())) {
    return InvalidArgument("result {} has no place for the value {}", shape.ToString(false),
                           value.shape().ToString(false));
  }
  std::vector<Literal> elements;
  Literal inputs = operands.size() == 1 ? *operands[0] : Literal();
  if (operands.size() != 1) {
    std::vector<Literal> copies;
    for (const Literal* operand : operands) copies.push_back(*operand);
    inputs = Literal::CreateTuple(std::move(copies));
  }
  elements.push_back(inputs.shape().Compatible(shape.tuple_shape(0))
                         ? std::move(inputs)
                         : Literal::CreateZeros(shape.tuple_shape(0)));
  elements.push_back(std::move(value));
  for (int64_t i = 2; i < shape.tuple_size(); ++i) {
    elements.push_back(Literal::CreateZeros(shape.tuple_shape(i)));
  }
  return Literal::CreateTuple(std::move(elements));
}

Status CheckOneParticipant(const ir::Attributes& attributes) {
  if (!attributes.replica_groups.has_value()) return Status::Ok();
  for (const std::vector<int64_t>& group : attributes.replica_groups->groups) {
    if (group.size() > 1) {
      return Unimplemented(
          "replica group of {} devices; the interpreter runs one device, "
          "evaluate the unpartitioned program instead",
          group.size());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Literal> EvaluateCollective(const ir::Instruction& instruction, const Operands& operands,
                                   EvalContext& context) {
  const Opcode opcode = instruction.opcode();
  if (IsDone(opcode)) {
    ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
    return Done(instruction, *operands[0]);
  }
  if (operands.empty()) return InvalidArgument("collective without operands");
  const ir::Attributes& attributes = instruction.attributes();
  Literal value;
  if (context.device.num_partitions > 1) {
    ALPA_ASSIGN_OR_RETURN(value, EvaluateDeviceCollective(instruction, operands, context.device));
  } else if (Status one = CheckOneParticipant(attributes); !one.ok()) {
    return one;
  } else if (opcode == Opcode::kCollectivePermute || opcode == Opcode::kCollectivePermuteStart) {
    // A pair naming another device moves data the single device cannot produce (with (1,0),
    // device 0 should receive device 1's value), so zeros would be a wrong answer, not XLA's.
    const auto& pairs = attributes.source_target_pairs;
    for (const auto& [source, target] : pairs) {
      if (source != 0 || target != 0) {
        return Unimplemented(
            "source_target_pairs name device {}; the interpreter runs one "
            "device (0), evaluate the unpartitioned program instead",
            source != 0 ? source : target);
      }
    }
    value = pairs.empty() ? Literal::CreateZeros(operands[0]->shape()) : *operands[0];
  } else if (operands.size() == 1) {
    value = *operands[0];
  } else {
    std::vector<Literal> copies;
    for (const Literal* operand : operands) copies.push_back(*operand);
    value = Literal::CreateTuple(std::move(copies));
  }
  const bool is_start = opcode == Opcode::kAllGatherStart || opcode == Opcode::kAllReduceStart ||
                        opcode == Opcode::kCollectivePermuteStart;
  if (is_start) return Started(instruction, operands, std::move(value));
  if (!value.shape().Compatible(instruction.shape()) && context.device.num_partitions > 1) {
    return InvalidArgument(
        "declared result {} but the collective gives {} on device {} of {}; the shapes were "
        "partitioned for another device count or group size",
        instruction.shape().ToString(false), value.shape().ToString(false),
        context.device.partition_id, context.device.num_partitions);
  }
  if (!value.shape().Compatible(instruction.shape())) {
    return Unimplemented(
        "result {} from operand {} needs several participants; the interpreter "
        "runs one device",
        instruction.shape().ToString(false), value.shape().ToString(false));
  }
  return value;
}

// async-start runs the wrapped computation at once; async-update passes its operand through;
// async-done takes the result. copy-start/copy-done carry a copy of the operand.
Result<Literal> EvaluateAsync(const ir::Instruction& instruction, const Operands& operands,
                              EvalContext& context) {
  const Opcode opcode = instruction.opcode();
  if (IsDone(opcode)) {
    ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
    return Done(instruction, *operands[0]);
  }
  if (opcode == Opcode::kAsyncUpdate) {
    ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
    return *operands[0];
  }
  if (opcode == Opcode::kCopyStart) {
    ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
    return Started(instruction, operands, *operands[0]);
  }
  if (instruction.called_computations().empty() || instruction.to_apply() == nullptr) {
    return InvalidArgument("async-start has no called computation");
  }
  std::vector<Literal> arguments;
  for (const Literal* operand : operands) arguments.push_back(*operand);
  ALPA_ASSIGN_OR_RETURN(
      Literal value, EvaluateComputationIn(*instruction.to_apply(), std::move(arguments), context));
  return Started(instruction, operands, std::move(value));
}

}  // namespace alpa::interp::internal
