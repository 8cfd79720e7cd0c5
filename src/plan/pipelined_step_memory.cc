#include "plan/pipelined_step_memory.h"

#include <algorithm>
#include <map>
#include <set>

namespace alpa::plan {
namespace {

bool InPass(const cost::MemoryModel& memory, int64_t step, cost::Pass pass) {
  return memory.values[static_cast<size_t>(step)].pass == pass;
}

// The saved activations as the stage split hands them over (the header).
int64_t HandedOverBytes(const cost::MemoryModel& memory) {
  const cost::Liveness& liveness = memory.liveness;
  std::vector<const ir::Instruction*> stack;
  for (size_t t = 0; t < memory.values.size(); ++t) {
    if (memory.values[t].category == cost::MemoryCategory::kSavedActivations) {
      stack.push_back(liveness.order[t]);
    }
  }
  std::set<const ir::Instruction*> handed;
  while (!stack.empty()) {
    const ir::Instruction* value = stack.back();
    stack.pop_back();
    const ir::Opcode opcode = value->opcode();
    if (opcode == ir::Opcode::kConstant || opcode == ir::Opcode::kIota ||
        opcode == ir::Opcode::kParameter) {
      continue;
    }
    if (opcode != ir::Opcode::kBroadcast && opcode != ir::Opcode::kBitcast) {
      handed.insert(value);
      continue;
    }
    for (const ir::Instruction* operand : value->operands()) {
      const int64_t step = liveness.StepOf(operand);
      if (step >= 0 && InPass(memory, step, cost::Pass::kForward)) stack.push_back(operand);
    }
  }
  int64_t bytes = 0;
  for (const ir::Instruction* value : handed) bytes += liveness.BufferOf(value).bytes;
  return bytes;
}

// The last step that reads `value` as the pipeline runs the step (the header), or its own step
// when none does.
int64_t LastRead(const ir::Computation& entry, const cost::Liveness& liveness,
                 const std::map<const ir::Instruction*, std::vector<const ir::Instruction*>>& users,
                 const ir::Instruction* value) {
  int64_t last = std::max<int64_t>(liveness.StepOf(value), 0);
  std::vector<const ir::Instruction*> stack = {value};
  while (!stack.empty()) {
    const auto readers = users.find(stack.back());
    stack.pop_back();
    if (readers == users.end()) continue;
    for (const ir::Instruction* reader : readers->second) {
      if (reader == entry.root()) continue;
      last = std::max(last, liveness.StepOf(reader));
      if (liveness.BufferOf(reader).alias) stack.push_back(reader);
    }
  }
  return last;
}

}  // namespace

PipelinedStepMemory PipelinedMemoryOf(const ir::Computation& entry, const cost::MemoryModel& memory,
                                      const std::vector<const ir::Instruction*>& forward_inputs,
                                      const std::vector<const ir::Instruction*>& backward_inputs,
                                      const std::vector<const ir::Instruction*>& sent) {
  const cost::Liveness& liveness = memory.liveness;
  const auto steps = static_cast<size_t>(liveness.steps());
  std::map<const ir::Instruction*, std::vector<const ir::Instruction*>> users;
  for (const ir::Instruction* instruction : liveness.order) {
    for (const ir::Instruction* operand : instruction->operands()) {
      users[operand].push_back(instruction);
    }
  }
  PipelinedStepMemory held;
  held.activation_bytes = HandedOverBytes(memory);
  // freed[t]: the bytes of the consumed values whose last reader ran before step t.
  std::vector<int64_t> freed(steps + 1, 0);
  for (const auto* inputs : {&forward_inputs, &backward_inputs, &sent}) {
    for (const ir::Instruction* value : *inputs) {
      const int64_t last = LastRead(entry, liveness, users, value);
      const int64_t bytes = liveness.BufferOf(value).bytes;
      freed[static_cast<size_t>(last + 1)] += bytes;
      if (inputs == &forward_inputs && !InPass(memory, last, cost::Pass::kForward)) {
        held.activation_bytes += bytes;
      }
    }
  }
  // One sweep over the buffers' lifetimes: all of them, and the update's own (its temporaries
  // from their start, the gradients it frees from their end).
  std::vector<int64_t> all_live(steps + 1, 0);
  std::vector<int64_t> update_live(steps + 1, 0);
  for (size_t t = 0; t < steps; ++t) {
    const cost::BufferInterval& buffer = liveness.buffers[t];
    all_live[static_cast<size_t>(buffer.start)] += buffer.bytes;
    all_live[static_cast<size_t>(buffer.end)] -= buffer.bytes;
    const cost::MemoryCategory category = memory.values[t].category;
    if (InPass(memory, static_cast<int64_t>(t), cost::Pass::kOther) &&  // kOther: the update
        category == cost::MemoryCategory::kTemporaries) {
      update_live[static_cast<size_t>(buffer.start)] += buffer.bytes;
      update_live[static_cast<size_t>(buffer.end)] -= buffer.bytes;
    } else if (category == cost::MemoryCategory::kGradients && buffer.end > buffer.start &&
               InPass(memory, buffer.end - 1, cost::Pass::kOther)) {
      update_live[static_cast<size_t>(buffer.end)] -= buffer.bytes;
    }
  }
  int64_t live = 0, buffers = 0, gone = 0;
  for (size_t t = 0; t < steps; ++t) {
    live += update_live[t];
    buffers += all_live[t];
    gone += freed[t];
    if (InPass(memory, static_cast<int64_t>(t), cost::Pass::kOther)) {
      const int64_t lowering = std::max<int64_t>(0, liveness.usage[t] - buffers);
      held.update_temporary_bytes = std::max(held.update_temporary_bytes, live + lowering);
    } else {
      held.task_peak_bytes = std::max(held.task_peak_bytes, liveness.usage[t] - gone);
    }
  }
  held.update_result_bytes = std::clamp<int64_t>(live, 0, held.update_temporary_bytes);
  return held;
}

}  // namespace alpa::plan
