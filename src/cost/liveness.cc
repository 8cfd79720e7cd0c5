#include "cost/liveness.h"

#include <algorithm>
#include <unordered_set>

#include "ir/broadcast_folding.h"
#include "ir/loop_fusion.h"
#include "support/status.h"

namespace alpa::cost {

using ir::Instruction;
using ir::Opcode;

namespace {

// Whether `opcode`'s result is a view of its operands' buffers (allocates nothing).
bool IsAliasOpcode(Opcode opcode) {
  return opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement ||
         opcode == Opcode::kBitcast || opcode == Opcode::kOptimizationBarrier;
}

}  // namespace

int64_t FullShapeBytes(const Instruction& instruction) { return instruction.shape().ByteSize(); }

int64_t Liveness::StepOf(const Instruction* instruction) const {
  auto it = step_of.find(instruction);
  return it == step_of.end() ? -1 : it->second;
}

const BufferInterval& Liveness::BufferOf(const Instruction* instruction) const {
  const int64_t step = StepOf(instruction);
  ALPA_CHECK(step >= 0, "%{} is not in the schedule", instruction->name());
  return buffers[static_cast<size_t>(step)];
}

Liveness ComputeLiveness(const ir::Computation& computation, const BufferBytesFn& bytes,
                         const FusedValues& fused, const std::vector<DonatedBuffer>& donated) {
  const std::vector<Instruction*> post_order = computation.MakePostOrder();
  return ComputeLiveness(computation, {post_order.begin(), post_order.end()}, bytes, fused,
                         donated);
}

Liveness ComputeLiveness(const ir::Computation& computation, std::vector<const Instruction*> order,
                         const BufferBytesFn& bytes, const FusedValues& fused,
                         const std::vector<DonatedBuffer>& donated) {
  Liveness liveness;
  liveness.order = std::move(order);
  const int64_t steps = liveness.steps();
  ALPA_CHECK(steps == computation.instruction_count(),
             "a schedule of %{} lists {} instructions, the computation has {}", computation.name(),
             steps, computation.instruction_count());
  for (int64_t t = 0; t < steps; ++t) {
    const Instruction* instruction = liveness.order[static_cast<size_t>(t)];
    ALPA_CHECK(instruction->parent() == &computation, "%{} is not an instruction of %{}",
               instruction->name(), computation.name());
    ALPA_CHECK(liveness.step_of.emplace(instruction, t).second, "%{} is scheduled twice",
               instruction->name());
  }

  // end[t]: one past the last step reading the value of step t; at least t + 1 (a value nobody
  // reads is freed right after its step).
  std::vector<int64_t> end(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    end[static_cast<size_t>(t)] = t + 1;
    for (const Instruction* operand : liveness.order[static_cast<size_t>(t)]->operands()) {
      const int64_t def = liveness.StepOf(operand);
      ALPA_CHECK(def >= 0 && def < t, "%{} is scheduled before its operand %{}",
                 liveness.order[static_cast<size_t>(t)]->name(), operand->name());
      end[static_cast<size_t>(def)] = std::max(end[static_cast<size_t>(def)], t + 1);
    }
  }
  // Broadcasts the fast kernels read in place are views of their operands, like the aliases; so
  // are values computed inside their readers' kernels, the runtime's loops (ir/loop_fusion.h)
  // or a fusing compiler's (`fused`). A fusion given already holds the loops' values (FusionFor:
  // XLA fuses every value a loop would, and on our runtime the fusion is the loops), so they
  // are derived here only when none is.
  const std::unordered_set<const Instruction*> read_in_place =
      ir::BroadcastsReadInPlace(computation);
  const std::unordered_set<const Instruction*> in_loops =
      fused.empty() ? ir::LoopFusedValues(computation) : std::unordered_set<const Instruction*>{};
  auto is_alias = [&](const Instruction* instruction) {
    return IsAliasOpcode(instruction->opcode()) || read_in_place.contains(instruction) ||
           in_loops.contains(instruction) || fused.contains(instruction);
  };
  if (const int64_t root = liveness.StepOf(computation.root()); root >= 0) {
    end[static_cast<size_t>(root)] = steps;  // the output outlives the program
  }
  // An alias keeps its operands alive as long as itself. Visiting readers before their operands
  // (reverse schedule order) pushes the end through chains of aliases in one pass.
  for (int64_t t = steps - 1; t >= 0; --t) {
    const Instruction* instruction = liveness.order[static_cast<size_t>(t)];
    if (!is_alias(instruction)) continue;
    for (const Instruction* operand : instruction->operands()) {
      int64_t& operand_end = end[static_cast<size_t>(liveness.StepOf(operand))];
      operand_end = std::max(operand_end, end[static_cast<size_t>(t)]);
    }
  }

  // A donated parameter's next value takes its buffer once its last reader has run (at the next
  // value's own step at the latest: an in-place update reads the old value it overwrites).
  std::unordered_set<const Instruction*> in_place;
  for (const DonatedBuffer& pair : donated) {
    const int64_t parameter = liveness.StepOf(pair.parameter);
    const int64_t next = liveness.StepOf(pair.next);
    ALPA_CHECK(parameter >= 0 && next >= 0, "a donated pair outside the schedule of %{}",
               computation.name());
    if (!is_alias(pair.next) && end[static_cast<size_t>(parameter)] - 1 <= next) {
      in_place.insert(pair.next);
    }
  }

  // usage(t) by a difference array: +bytes at start, -bytes at end.
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  liveness.buffers.resize(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    const Instruction* instruction = liveness.order[static_cast<size_t>(t)];
    BufferInterval& buffer = liveness.buffers[static_cast<size_t>(t)];
    buffer.instruction = instruction;
    buffer.start = t;
    buffer.end = end[static_cast<size_t>(t)];
    buffer.alias = is_alias(instruction);
    buffer.in_place = in_place.contains(instruction);
    if (instruction->opcode() == Opcode::kParameter) {
      buffer.start = 0;
      buffer.end = steps;
      buffer.bytes = bytes(*instruction);
      liveness.parameter_bytes += buffer.bytes;
    } else if (!buffer.alias && !buffer.in_place) {
      buffer.bytes = bytes(*instruction);
    }
    ALPA_CHECK(buffer.bytes >= 0, "%{} has {} bytes", instruction->name(), buffer.bytes);
    delta[static_cast<size_t>(buffer.start)] += buffer.bytes;
    delta[static_cast<size_t>(buffer.end)] -= buffer.bytes;
  }
  liveness.usage.resize(static_cast<size_t>(steps));
  int64_t live = 0;
  for (int64_t t = 0; t < steps; ++t) {
    live += delta[static_cast<size_t>(t)];
    liveness.usage[static_cast<size_t>(t)] = live;
    if (liveness.peak_step < 0 || live > liveness.peak_bytes) {
      liveness.peak_bytes = live;
      liveness.peak_step = t;
    }
  }
  return liveness;
}

}  // namespace alpa::cost
