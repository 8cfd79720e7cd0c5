#include "runtime/device_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "interp/evaluator.h"
#include "support/units.h"

namespace alpa::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point epoch, Clock::time_point t) {
  return std::chrono::duration<double>(t - epoch).count();
}

// The value of a tuple or get-tuple-element step whose operands are dead after it: their
// buffers move into the result instead of being copied.
ir::Literal MoveOperands(const InstructionStep& step, std::vector<ir::Literal>& slots) {
  if (step.instruction->opcode() == ir::Opcode::kGetTupleElement) {
    ir::Literal& tuple = slots[static_cast<size_t>(step.operands[0])];
    return std::move(tuple.tuple_element(step.instruction->attributes().tuple_index));
  }
  std::vector<ir::Literal> elements;
  elements.reserve(step.operands.size());
  for (int32_t operand : step.operands) {
    elements.push_back(std::move(slots[static_cast<size_t>(operand)]));
  }
  return ir::Literal::CreateTuple(std::move(elements));
}

}  // namespace

int64_t LiteralBytes(const ir::Literal& literal) {
  if (!literal.shape().IsTuple()) return literal.size_bytes();
  int64_t bytes = 0;
  for (const ir::Literal& element : literal.tuple_elements()) bytes += LiteralBytes(element);
  return bytes;
}

bool InterpretedStep(const InstructionStep& step) {
  const ir::Opcode opcode = step.instruction->opcode();
  return step.fast_kernel == nullptr && step.loop == nullptr && !step.moves_operands &&
         !step.collective && opcode != ir::Opcode::kTuple && opcode != ir::Opcode::kGetTupleElement;
}

Result<ir::Literal> ExecuteInstructionList(const InstructionList& list,
                                           std::vector<ir::Literal> arguments,
                                           const interp::DeviceContext& device,
                                           const ExecuteOptions& options,
                                           ExecutionProfile* profile) {
  return ExecuteOnBorrowedArguments(list, arguments, device, options, profile);
}

Result<ir::Literal> ExecuteOnBorrowedArguments(const InstructionList& list,
                                               std::vector<ir::Literal>& arguments,
                                               const interp::DeviceContext& device,
                                               const ExecuteOptions& options,
                                               ExecutionProfile* profile,
                                               const std::vector<bool>* donated) {
  ALPA_RETURN_IF_ERROR(interp::CheckArguments(*list.computation, arguments));
  ExecutionProfile local_profile;
  ExecutionProfile& out = profile != nullptr ? *profile : local_profile;
  out = ExecutionProfile{};

  std::vector<ir::Literal> slots(static_cast<size_t>(list.slot_count));
  // Parameters' slots are never freed (the caller owns them): they go back whatever happens.
  struct HandBack {
    std::vector<ir::Literal>& arguments;
    std::vector<ir::Literal>& slots;
    const std::vector<int32_t>& parameter_slots;
    ~HandBack() {
      for (size_t i = 0; i < arguments.size(); ++i) {
        arguments[i] = std::move(slots[static_cast<size_t>(parameter_slots[i])]);
      }
    }
  } hand_back{arguments, slots, list.parameter_slots};
  std::vector<int64_t> slot_bytes(static_cast<size_t>(list.slot_count), 0);
  int64_t live = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const size_t slot = static_cast<size_t>(list.parameter_slots[i]);
    slot_bytes[slot] = LiteralBytes(arguments[i]);
    slots[slot] = std::move(arguments[i]);
    live += slot_bytes[slot];
  }
  out.argument_bytes = live;
  out.peak_bytes = live;
  std::vector<bool> donated_slot(static_cast<size_t>(list.slot_count), false);
  for (size_t i = 0; donated != nullptr && i < arguments.size(); ++i) {
    donated_slot[static_cast<size_t>(list.parameter_slots[i])] = (*donated)[i];
  }

  interp::InstructionEvaluator evaluator(device);
  std::vector<const ir::Literal*> operands;
  for (const InstructionStep& step : list.steps) {
    const Clock::time_point start = options.trace ? Clock::now() : Clock::time_point{};
    Result<ir::Literal> value = [&]() -> Result<ir::Literal> {
      if (step.moves_operands) return MoveOperands(step, slots);
      operands.clear();
      for (int32_t operand : step.operands)
        operands.push_back(&slots[static_cast<size_t>(operand)]);
      if (step.loop != nullptr) return RunFusedLoop(*step.instruction, *step.loop, operands);
      if (step.fast_kernel != nullptr) {
        return step.fast_kernel(*step.instruction, operands);
      }
      return evaluator.Evaluate(*step.instruction, operands);
    }();
    if (!value.ok()) {
      return value.status().WithContext(fmt::format("%{} ({})", step.instruction->name(),
                                                    ir::OpcodeName(step.instruction->opcode())));
    }
    if (options.trace) {
      const Clock::time_point end = Clock::now();
      out.events.push_back({step.instruction, step.collective, InterpretedStep(step),
                            SecondsSince(options.epoch, start),
                            std::chrono::duration<double>(end - start).count(),
                            step.loop != nullptr ? step.loop->loop.fused_values() : 0});
    }
    const size_t result = static_cast<size_t>(step.result);
    slot_bytes[result] = LiteralBytes(*value);
    // Moved buffers count once: in the result, no longer in the operands they came from.
    if (step.moves_operands && step.instruction->opcode() == ir::Opcode::kTuple) {
      for (int32_t operand : step.operands) {
        live -= std::exchange(slot_bytes[static_cast<size_t>(operand)], 0);
      }
    } else if (step.moves_operands) {
      slot_bytes[static_cast<size_t>(step.operands[0])] -= slot_bytes[result];
      live -= slot_bytes[result];
    }
    live += slot_bytes[result];
    if (options.memory_limit_bytes > 0 && live > options.memory_limit_bytes) {
      return Status(
          StatusCode::kResourceExhausted,
          fmt::format("out of memory at %{} ({}): its {} result takes the device's live "
                      "buffers to {}, past the {} it may use; use more devices or a "
                      "method that shards more (zero3, shard)",
                      step.instruction->name(), ir::OpcodeName(step.instruction->opcode()),
                      FormatBytes(slot_bytes[result]), FormatBytes(live),
                      FormatBytes(options.memory_limit_bytes)));
    }
    if (live > out.peak_bytes) {
      out.peak_bytes = live;
      out.peak_instruction = step.instruction;
    }
    slots[result] = std::move(value).value();
    for (int32_t slot : step.release) {
      slots[static_cast<size_t>(slot)] = ir::Literal();
      live -= std::exchange(slot_bytes[static_cast<size_t>(slot)], 0);
    }
    for (int32_t slot : step.release_if_donated) {
      if (!donated_slot[static_cast<size_t>(slot)]) continue;
      slots[static_cast<size_t>(slot)] = ir::Literal();
      live -= std::exchange(slot_bytes[static_cast<size_t>(slot)], 0);
    }
  }
  if (std::count(list.parameter_slots.begin(), list.parameter_slots.end(), list.root_slot)) {
    return slots[static_cast<size_t>(list.root_slot)];  // the caller keeps the parameter
  }
  return std::move(slots[static_cast<size_t>(list.root_slot)]);
}

}  // namespace alpa::runtime
