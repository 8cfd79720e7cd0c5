#include "interp/evaluator.h"

#include <fmt/format.h>

#include <unordered_map>
#include <utility>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp {
namespace internal {
namespace {

using ir::Instruction;
using ir::Literal;
using ir::Opcode;

// Deeper nesting than any real program has; reaching it means the call graph has a cycle.
constexpr int64_t kMaxCallDepth = 200;

Result<Literal> EvaluateConstant(const Instruction& instruction) {
  const std::optional<Literal>& literal = instruction.attributes().literal;
  if (!literal.has_value()) return InvalidArgument("constant has no value");
  if (literal->is_elided()) {
    return InvalidArgument(
        "constant %{} has elided value {{...}}; the dump dropped it, re-export with "
        "print_large_constants",
        instruction.name());
  }
  if (!literal->shape().Compatible(instruction.shape())) {
    return InvalidArgument("constant value has shape {} but the instruction has {}",
                           literal->shape().ToString(false), instruction.shape().ToString(false));
  }
  return *literal;
}

Result<Literal> EvaluateGetTupleElement(const Instruction& instruction, const Literal& tuple) {
  const int64_t index = instruction.attributes().tuple_index;
  if (!tuple.shape().IsTuple() || index < 0 ||
      index >= static_cast<int64_t>(tuple.tuple_elements().size())) {
    return InvalidArgument("index={} is out of range for operand of shape {}", index,
                           tuple.shape().ToString(false));
  }
  return tuple.tuple_element(index);
}

// Values whose computation is trivial: tuples, tokens, ids, identities.
Result<Literal> EvaluateStructural(const Instruction& instruction, const Operands& operands) {
  switch (instruction.opcode()) {
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      elements.reserve(operands.size());
      for (const Literal* operand : operands) elements.push_back(*operand);
      return Literal::CreateTuple(std::move(elements));
    }
    case Opcode::kAfterAll:
      return Literal::CreateZeros(ir::Shape::Token());
    // add-dependency(value, token) orders the value after the token; the value passes through.
    case Opcode::kAddDependency:
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kSetDimensionSize:
      if (operands.empty()) return InvalidArgument("expects an operand");
      return *operands[0];
    case Opcode::kGetDimensionSize: {
      const int64_t dim =
          instruction.attributes().dimensions.empty() ? -1 : instruction.attributes().dimensions[0];
      if (operands.empty() || dim < 0 || dim >= operands[0]->shape().rank()) {
        return InvalidArgument("dimensions={{{}}} is not a dimension of the operand", dim);
      }
      Literal result = Literal::CreateZeros(instruction.shape());
      result.SetInt(0, operands[0]->shape().dim(dim));
      return result;
    }
    default:
      return Unimplemented("opcode {} is not supported by the interpreter",
                           ir::OpcodeName(instruction.opcode()));
  }
}

}  // namespace

Result<Literal> Dispatch(const Instruction& instruction, const Operands& operands,
                         EvalContext& context) {
  const Opcode opcode = instruction.opcode();
  if (ir::IsElementwiseUnary(opcode)) return EvaluateUnary(instruction, operands);
  if (ir::IsElementwiseBinary(opcode)) return EvaluateBinary(instruction, operands);
  if (ir::IsCollective(opcode)) return EvaluateCollective(instruction, operands, context);
  switch (opcode) {
    case Opcode::kPartitionId:
    case Opcode::kReplicaId: {
      Literal id = Literal::CreateZeros(instruction.shape());
      if (!id.shape().IsArray() || id.element_count() != 1) {
        return InvalidArgument("result {} is not a scalar", instruction.shape().ToString(false));
      }
      id.SetInt(0, opcode == Opcode::kPartitionId ? context.device.partition_id
                                                  : context.device.replica_id);
      return id;
    }
    case Opcode::kConstant:
      return EvaluateConstant(instruction);
    case Opcode::kGetTupleElement:
      ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
      return EvaluateGetTupleElement(instruction, *operands[0]);
    case Opcode::kCompare:
      return EvaluateCompare(instruction, operands);
    case Opcode::kSelect:
      return EvaluateSelect(instruction, operands);
    case Opcode::kClamp:
      return EvaluateClamp(instruction, operands);
    case Opcode::kConvert:
      return EvaluateConvert(instruction, operands);
    case Opcode::kBitcastConvert:
      return EvaluateBitcastConvert(instruction, operands);
    case Opcode::kReducePrecision:
      return EvaluateReducePrecision(instruction, operands);
    case Opcode::kBroadcast:
      return EvaluateBroadcast(instruction, operands);
    // Every array is row-major here, so a bitcast is a reshape of the same bytes.
    case Opcode::kBitcast:
    case Opcode::kReshape:
      return EvaluateReshape(instruction, operands);
    case Opcode::kTranspose:
      return EvaluateTranspose(instruction, operands);
    case Opcode::kSlice:
      return EvaluateSlice(instruction, operands);
    case Opcode::kReverse:
      return EvaluateReverse(instruction, operands);
    case Opcode::kConcatenate:
      return EvaluateConcatenate(instruction, operands);
    case Opcode::kPad:
      return EvaluatePad(instruction, operands);
    case Opcode::kIota:
      return EvaluateIota(instruction);
    case Opcode::kDynamicSlice:
      return EvaluateDynamicSlice(instruction, operands);
    case Opcode::kDynamicUpdateSlice:
      return EvaluateDynamicUpdateSlice(instruction, operands);
    case Opcode::kReduce:
      return EvaluateReduce(instruction, operands, context);
    case Opcode::kReduceWindow:
      return EvaluateReduceWindow(instruction, operands, context);
    case Opcode::kSelectAndScatter:
      return EvaluateSelectAndScatter(instruction, operands, context);
    case Opcode::kGather:
      return EvaluateGather(instruction, operands);
    case Opcode::kScatter:
      return EvaluateScatter(instruction, operands, context);
    case Opcode::kSort:
      return EvaluateSort(instruction, operands, context);
    case Opcode::kTopK:
      return EvaluateTopK(instruction, operands);
    case Opcode::kCall:
    case Opcode::kFusion:
      return EvaluateCall(instruction, operands, context);
    case Opcode::kWhile:
      return EvaluateWhile(instruction, operands, context);
    case Opcode::kConditional:
      return EvaluateConditional(instruction, operands, context);
    case Opcode::kMap:
      return EvaluateMap(instruction, operands, context);
    case Opcode::kDot:
      return EvaluateDot(instruction, operands);
    case Opcode::kConvolution:
      return EvaluateConvolution(instruction, operands);
    case Opcode::kBatchNormTraining:
      return EvaluateBatchNormTraining(instruction, operands);
    case Opcode::kBatchNormInference:
      return EvaluateBatchNormInference(instruction, operands);
    case Opcode::kBatchNormGrad:
      return EvaluateBatchNormGrad(instruction, operands);
    case Opcode::kRng:
      return EvaluateRng(instruction, operands, context);
    case Opcode::kRngBitGenerator:
      return EvaluateRngBitGenerator(instruction, operands);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
      return EvaluateAsync(instruction, operands, context);
    case Opcode::kCustomCall:
      return EvaluateCustomCall(instruction, operands);
    default:
      return EvaluateStructural(instruction, operands);
  }
}

Result<Literal> EvaluateComputationIn(const ir::Computation& computation,
                                      std::vector<Literal> arguments, EvalContext& context) {
  ALPA_RETURN_IF_ERROR(CheckArguments(computation, arguments));
  if (computation.root() == nullptr) {
    return InvalidArgument("computation {} has no ROOT instruction", computation.name());
  }
  if (context.call_depth >= kMaxCallDepth) {
    return InvalidArgument("computation {} is nested {} calls deep; the call graph has a cycle",
                           computation.name(), context.call_depth);
  }
  ++context.call_depth;
  std::unordered_map<const Instruction*, Literal> values;
  std::vector<Instruction*> parameters = computation.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    values.emplace(parameters[i], std::move(arguments[i]));
  }
  // A value is dropped once its last user has run, so memory follows the live set of the
  // schedule rather than the whole program (a BERT step peaks at a tenth of its total).
  const std::vector<Instruction*> order = computation.MakePostOrder();
  std::unordered_map<const Instruction*, int64_t> pending_uses;
  for (const Instruction* instruction : order) {
    for (const Instruction* operand : instruction->operands()) ++pending_uses[operand];
  }
  auto release_if_dead = [&](const Instruction* instruction) {
    if (instruction != computation.root() && pending_uses[instruction] == 0) {
      values.erase(instruction);
    }
  };
  Operands operands;
  Status status;
  for (const Instruction* instruction : order) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    operands.clear();
    for (const Instruction* operand : instruction->operands()) {
      auto it = values.find(operand);
      ALPA_CHECK(it != values.end(), "operand %{} of %{} not evaluated before its user",
                 operand->name(), instruction->name());
      operands.push_back(&it->second);
    }
    Result<Literal> value = Dispatch(*instruction, operands, context);
    if (!value.ok()) {
      status = value.status().WithContext(
          fmt::format("%{} ({}) in computation {}", instruction->name(),
                      ir::OpcodeName(instruction->opcode()), computation.name()));
      break;
    }
    values.insert_or_assign(instruction, std::move(value).value());
    for (const Instruction* operand : instruction->operands()) {
      --pending_uses[operand];
      release_if_dead(operand);
    }
    release_if_dead(instruction);
  }
  --context.call_depth;
  if (!status.ok()) return status;
  return std::move(values.at(computation.root()));
}

}  // namespace internal

Status CheckArguments(const ir::Computation& computation,
                      const std::vector<ir::Literal>& arguments) {
  std::vector<ir::Instruction*> parameters = computation.parameters();
  if (parameters.size() != arguments.size()) {
    return InvalidArgument("computation {} takes {} parameters but got {} arguments",
                           computation.name(), parameters.size(), arguments.size());
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr) {
      return InvalidArgument("computation {} has no parameter({})", computation.name(), i);
    }
    if (!arguments[i].shape().Compatible(parameters[i]->shape())) {
      return InvalidArgument(
          "argument {} of computation {} has shape {} but parameter %{} expects {}; pass a value "
          "of the parameter's shape",
          i, computation.name(), arguments[i].shape().ToString(false), parameters[i]->name(),
          parameters[i]->shape().ToString(false));
    }
  }
  return Status::Ok();
}

Result<ir::Literal> EvaluateModule(const ir::Module& module, std::vector<ir::Literal> arguments) {
  return EvaluateModule(module, std::move(arguments), DeviceContext{});
}

Result<ir::Literal> EvaluateModule(const ir::Module& module, std::vector<ir::Literal> arguments,
                                   const DeviceContext& device) {
  if (module.entry() == nullptr) {
    return InvalidArgument("module {} has no entry computation", module.name());
  }
  if (device.num_partitions < 1 || device.partition_id < 0 ||
      device.partition_id >= device.num_partitions) {
    return InvalidArgument("device {} of {} devices does not exist", device.partition_id,
                           device.num_partitions);
  }
  internal::EvalContext context;
  context.device = device;
  return internal::EvaluateComputationIn(*module.entry(), std::move(arguments), context);
}

InstructionEvaluator::InstructionEvaluator(const DeviceContext& device)
    : context_(std::make_unique<internal::EvalContext>()) {
  context_->device = device;
}

InstructionEvaluator::~InstructionEvaluator() = default;

Result<ir::Literal> InstructionEvaluator::Evaluate(
    const ir::Instruction& instruction, const std::vector<const ir::Literal*>& operands) {
  return internal::Dispatch(instruction, operands, *context_);
}

Result<ir::Literal> EvaluateComputation(const ir::Computation& computation,
                                        std::vector<ir::Literal> arguments) {
  internal::EvalContext context;
  return internal::EvaluateComputationIn(computation, std::move(arguments), context);
}

}  // namespace alpa::interp
