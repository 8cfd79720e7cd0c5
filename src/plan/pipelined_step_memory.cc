#include "plan/pipelined_step_memory.h"

#include <algorithm>
#include <map>
#include <set>

namespace alpa::plan {
namespace {

bool InPass(const cost::MemoryModel& memory, int64_t step, cost::Pass pass) {
  return memory.values[static_cast<size_t>(step)].pass == pass;
}

// The saved activations as the stage split hands them over, and the broadcasts among them it
// computes again at the start of the backward (the header).
struct Residuals {
  int64_t handed_bytes = 0;
  int64_t recomputed_bytes = 0;
};

Residuals ResidualsOf(const cost::MemoryModel& memory) {
  const cost::Liveness& liveness = memory.liveness;
  std::vector<const ir::Instruction*> stack;
  for (size_t t = 0; t < memory.values.size(); ++t) {
    if (memory.values[t].category == cost::MemoryCategory::kSavedActivations) {
      stack.push_back(liveness.order[t]);
    }
  }
  std::set<const ir::Instruction*> handed, recomputed;
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
    recomputed.insert(value);
    for (const ir::Instruction* operand : value->operands()) {
      const int64_t step = liveness.StepOf(operand);
      if (step >= 0 && InPass(memory, step, cost::Pass::kForward)) stack.push_back(operand);
    }
  }
  Residuals residuals;
  for (const ir::Instruction* value : handed) {
    residuals.handed_bytes += liveness.BufferOf(value).bytes;
  }
  // A broadcast read in place (and a bitcast) is a view: 0 bytes.
  for (const ir::Instruction* value : recomputed) {
    residuals.recomputed_bytes += liveness.BufferOf(value).bytes;
  }
  return residuals;
}

// runs[t]: whether the pipeline runs step t: the step's results' ancestors, but where the stage
// is not the last (it receives cotangents) its loss's: that loss, the sum of its sent values
// times their cotangents, only seeds the backward, and the stage split runs neither it nor the
// values only it reads (spmd/stage_split.h).
std::vector<bool> RunSteps(const ir::Computation& entry, const cost::Liveness& liveness,
                           bool seeded_by_cotangents) {
  std::vector<bool> runs(liveness.order.size(), false);
  const ir::Instruction* root = entry.root();
  std::vector<const ir::Instruction*> stack;
  if (root->opcode() != ir::Opcode::kTuple) stack.push_back(root);
  for (size_t i = 0; root->opcode() == ir::Opcode::kTuple && i < root->operands().size(); ++i) {
    if (i > 0 || !seeded_by_cotangents) stack.push_back(root->operand(i));  // 0: the loss
  }
  while (!stack.empty()) {
    const ir::Instruction* value = stack.back();
    stack.pop_back();
    const int64_t step = liveness.StepOf(value);
    if (step < 0 || runs[static_cast<size_t>(step)]) continue;
    runs[static_cast<size_t>(step)] = true;
    for (const ir::Instruction* operand : value->operands()) stack.push_back(operand);
  }
  return runs;
}

// The last step that reads `value` as the pipeline runs the step (the header), or its own step
// when none does.
int64_t LastRead(const ir::Computation& entry, const cost::Liveness& liveness,
                 const std::map<const ir::Instruction*, std::vector<const ir::Instruction*>>& users,
                 const std::vector<bool>& runs, const ir::Instruction* value) {
  int64_t last = std::max<int64_t>(liveness.StepOf(value), 0);
  std::vector<const ir::Instruction*> stack = {value};
  while (!stack.empty()) {
    const auto readers = users.find(stack.back());
    stack.pop_back();
    if (readers == users.end()) continue;
    for (const ir::Instruction* reader : readers->second) {
      const int64_t step = liveness.StepOf(reader);
      if (reader == entry.root() || step < 0 || !runs[static_cast<size_t>(step)]) continue;
      last = std::max(last, step);
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
  const Residuals residuals = ResidualsOf(memory);
  held.activation_bytes = residuals.handed_bytes;
  held.recomputed_bytes = residuals.recomputed_bytes;
  const std::vector<bool> runs = RunSteps(entry, liveness, !backward_inputs.empty());
  // not_held, as differences: an input counts from `from` to `to`, within its buffer's life in
  // the model (a sent value the model frees after its reader already is not counted again).
  std::vector<int64_t> not_held(steps + 1, 0);
  auto not_held_over = [&](const cost::BufferInterval& buffer, int64_t from, int64_t to) {
    from = std::max(from, buffer.start);
    to = std::min({to, buffer.end, static_cast<int64_t>(steps)});
    if (from >= to) return;
    not_held[static_cast<size_t>(from)] += buffer.bytes;
    not_held[static_cast<size_t>(to)] -= buffer.bytes;
  };
  int64_t first_backward = 0;
  while (first_backward < static_cast<int64_t>(steps) &&
         !InPass(memory, first_backward, cost::Pass::kBackward)) {
    ++first_backward;
  }
  for (const auto* inputs : {&forward_inputs, &backward_inputs, &sent}) {
    for (const ir::Instruction* value : *inputs) {
      const int64_t last = LastRead(entry, liveness, users, runs, value);
      const cost::BufferInterval& buffer = liveness.BufferOf(value);
      not_held_over(buffer, last + 1, static_cast<int64_t>(steps));
      if (inputs == &backward_inputs) {  // received as the backward starts
        not_held_over(buffer, 0, std::min(first_backward, last + 1));
      }
      if (inputs == &forward_inputs && !InPass(memory, last, cost::Pass::kForward)) {
        held.activation_bytes += buffer.bytes;
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
  int64_t live = 0, buffers = 0, absent = 0;
  for (size_t t = 0; t < steps; ++t) {
    live += update_live[t];
    buffers += all_live[t];
    absent += not_held[t];
    if (InPass(memory, static_cast<int64_t>(t), cost::Pass::kOther)) {
      const int64_t lowering = std::max<int64_t>(0, liveness.usage[t] - buffers);
      held.update_temporary_bytes = std::max(held.update_temporary_bytes, live + lowering);
    } else if (runs[t]) {
      held.task_peak_bytes = std::max(held.task_peak_bytes, liveness.usage[t] - absent);
    }
  }
  held.update_result_bytes = std::clamp<int64_t>(live, 0, held.update_temporary_bytes);
  return held;
}

}  // namespace alpa::plan
