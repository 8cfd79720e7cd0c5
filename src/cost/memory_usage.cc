#include "cost/memory_usage.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace alpa::cost {
namespace {

using ir::Instruction;
using ir::Opcode;

// Ops whose result is (a view of) their operands' buffers.
bool IsAlias(Opcode opcode) {
  return opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement ||
         opcode == Opcode::kBitcast || opcode == Opcode::kOptimizationBarrier;
}

}  // namespace

MemoryUsage NaivePeakMemory(const ir::Computation& computation) {
  MemoryUsage usage;
  const std::vector<Instruction*> order = computation.MakePostOrder();
  const int64_t steps = static_cast<int64_t>(order.size());
  std::unordered_map<const Instruction*, int64_t> step_of;
  for (int64_t t = 0; t < steps; ++t) step_of[order[static_cast<size_t>(t)]] = t;

  // last_use[t]: the last step at which the value defined at step t is read; at least t itself.
  std::vector<int64_t> last_use(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) last_use[static_cast<size_t>(t)] = t;
  for (int64_t t = 0; t < steps; ++t) {
    for (const Instruction* operand : order[static_cast<size_t>(t)]->operands()) {
      auto it = step_of.find(operand);
      if (it == step_of.end()) continue;
      int64_t& end = last_use[static_cast<size_t>(it->second)];
      end = std::max(end, t);
    }
  }
  if (auto it = step_of.find(computation.root()); it != step_of.end()) {
    last_use[static_cast<size_t>(it->second)] = steps;  // the output outlives the program
  }
  // An alias keeps its operands alive as long as itself. Visiting users before their operands
  // (reverse post order) pushes the end through chains of aliases in one pass.
  for (int64_t t = steps - 1; t >= 0; --t) {
    const Instruction* instruction = order[static_cast<size_t>(t)];
    if (!IsAlias(instruction->opcode())) continue;
    for (const Instruction* operand : instruction->operands()) {
      auto it = step_of.find(operand);
      if (it == step_of.end()) continue;
      int64_t& end = last_use[static_cast<size_t>(it->second)];
      end = std::max(end, last_use[static_cast<size_t>(t)]);
    }
  }

  // bytes allocated at each step, and the bytes freed after each step.
  std::vector<int64_t> freed_after(static_cast<size_t>(steps) + 1, 0);
  std::vector<int64_t> allocated(static_cast<size_t>(steps), 0);
  for (int64_t t = 0; t < steps; ++t) {
    const Instruction* instruction = order[static_cast<size_t>(t)];
    const int64_t bytes = instruction->shape().ByteSize();
    if (instruction->opcode() == Opcode::kParameter) {
      usage.parameter_bytes += bytes;
    } else if (!IsAlias(instruction->opcode())) {
      allocated[static_cast<size_t>(t)] = bytes;
      freed_after[static_cast<size_t>(last_use[static_cast<size_t>(t)])] += bytes;
    }
  }

  int64_t live = usage.parameter_bytes;
  usage.peak_bytes = -1;
  for (int64_t t = 0; t < steps; ++t) {
    live += allocated[static_cast<size_t>(t)];
    if (live > usage.peak_bytes) {
      usage.peak_bytes = live;
      usage.peak_instruction = order[static_cast<size_t>(t)];
    }
    live -= freed_after[static_cast<size_t>(t)];
  }
  if (usage.peak_bytes < 0) usage.peak_bytes = usage.parameter_bytes;
  return usage;
}

}  // namespace alpa::cost
