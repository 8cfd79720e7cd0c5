#include "cost/liveness.h"

#include <algorithm>
#include <array>
#include <optional>
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

// The moments of a lowered step (the formulas in liveness.h), and which buffers each holds.
enum class Moment { kResharding, kKernel, kCollective };

struct LoweredStep {
  int64_t t = 0;
  const LoweredInstruction* lowered = nullptr;
  bool copies_outlive_step = false;  // t is computed inside its reader's kernel
};

// Whether a buffer dies once the step copied it: a non-parameter operand it reads last, and
// only through the copy.
bool DiesOnceCopied(const BufferInterval& buffer, const LoweredStep& step) {
  const auto& copied = step.lowered->resharded_operands;
  return buffer.instruction->opcode() != Opcode::kParameter && buffer.end == step.t + 1 &&
         std::find(copied.begin(), copied.end(), buffer.instruction) != copied.end();
}

// The bytes of each moment of `step`: `live` is what the intervals count at it (before(t), the
// copies live then and t's result), `freed_after` the buffers it reads last.
std::array<int64_t, 3> MomentBytes(const Liveness& liveness, const LoweredStep& step, int64_t live,
                                   int64_t freed_after) {
  const int64_t result = liveness.buffers[static_cast<size_t>(step.t)].bytes;
  int64_t copied = 0;
  std::unordered_set<const Instruction*> seen;
  for (const Instruction* operand : step.lowered->resharded_operands) {
    const BufferInterval& buffer = liveness.BufferOf(operand);
    if (seen.insert(operand).second && DiesOnceCopied(buffer, step)) copied += buffer.bytes;
  }
  const int64_t partial = step.lowered->unreduced_result_bytes;
  const int64_t copies_freed = step.copies_outlive_step ? 0 : step.lowered->resharded_operand_bytes;
  return {live - result, live - result - copied + (partial > 0 ? partial : result),
          partial > 0 ? live - freed_after - copies_freed + partial : 0};
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
                         const FusedValues& fused, const std::vector<DonatedBuffer>& donated,
                         const Lowering& lowering) {
  const std::vector<Instruction*> post_order = computation.MakePostOrder();
  return ComputeLiveness(computation, {post_order.begin(), post_order.end()}, bytes, fused, donated,
                         lowering);
}

Liveness ComputeLiveness(const ir::Computation& computation, std::vector<const Instruction*> order,
                         const BufferBytesFn& bytes, const FusedValues& fused,
                         const std::vector<DonatedBuffer>& donated, const Lowering& lowering) {
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
  // A value a resharding collective reads is written to memory whatever kernel reads it later.
  std::unordered_set<const Instruction*> resharded;
  for (const auto& [reader, lowered] : lowering) {
    resharded.insert(lowered.resharded_operands.begin(), lowered.resharded_operands.end());
  }
  auto is_alias = [&](const Instruction* instruction) {
    if (IsAliasOpcode(instruction->opcode()) || read_in_place.contains(instruction)) return true;
    return (in_loops.contains(instruction) || fused.contains(instruction)) &&
           !resharded.contains(instruction);
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
  // The resharded copies live while their reader runs, or until its kernel's root ran.
  std::unordered_map<int64_t, LoweredStep> lowered_steps;  // by step
  std::vector<BufferInterval> copies;
  for (const auto& [reader, lowered] : lowering) {
    const int64_t t = liveness.StepOf(reader);
    ALPA_CHECK(t >= 0, "a lowered instruction outside the schedule of %{}", computation.name());
    lowered_steps[t] = {t, &lowered, is_alias(reader)};
    copies.push_back({reader, t, is_alias(reader) ? end[static_cast<size_t>(t)] : t + 1,
                      lowered.resharded_operand_bytes});
    delta[static_cast<size_t>(copies.back().start)] += copies.back().bytes;
    delta[static_cast<size_t>(copies.back().end)] -= copies.back().bytes;
  }
  // Whether `buffer` is freed after step t, which reads it last (the parameters, t's own result
  // and a root tuple's elements, the output, are not).
  const bool output_is_view = is_alias(computation.root());
  auto freed_after_step = [&](const BufferInterval& buffer, int64_t t) {
    return buffer.end == t + 1 && buffer.start < t &&
           buffer.instruction->opcode() != Opcode::kParameter &&
           (buffer.end < steps || !output_is_view);
  };
  std::vector<int64_t> freed_after(static_cast<size_t>(steps), 0);
  for (const BufferInterval& buffer : liveness.buffers) {
    if (freed_after_step(buffer, buffer.end - 1)) {
      freed_after[static_cast<size_t>(buffer.end - 1)] += buffer.bytes;
    }
  }
  liveness.usage.resize(static_cast<size_t>(steps));
  std::optional<Moment> peak_moment;  // none: the peak step is not lowered
  int64_t live = 0;
  for (int64_t t = 0; t < steps; ++t) {
    live += delta[static_cast<size_t>(t)];
    int64_t& usage = liveness.usage[static_cast<size_t>(t)];
    usage = live;
    std::optional<Moment> moment;
    if (auto it = lowered_steps.find(t); it != lowered_steps.end()) {
      const std::array<int64_t, 3> bytes_at =
          MomentBytes(liveness, it->second, live, freed_after[static_cast<size_t>(t)]);
      const auto largest = std::max_element(bytes_at.begin(), bytes_at.end());
      usage = *largest;
      moment = static_cast<Moment>(largest - bytes_at.begin());
    }
    if (liveness.peak_step < 0 || usage > liveness.peak_bytes) {
      liveness.peak_bytes = usage;
      liveness.peak_step = t;
      peak_moment = moment;
    }
  }

  // What the peak holds: the buffers of its moment, and the copies and partial sums beside them.
  const int64_t peak = liveness.peak_step;
  liveness.held_at_peak.assign(static_cast<size_t>(steps), false);
  for (int64_t t = 0; t < steps; ++t) {
    const BufferInterval& buffer = liveness.buffers[static_cast<size_t>(t)];
    bool held = buffer.live_at(peak);
    if (peak_moment.has_value()) {
      const LoweredStep& step = lowered_steps.at(peak);
      const bool partial = step.lowered->unreduced_result_bytes > 0;
      switch (*peak_moment) {
        case Moment::kResharding:
          held = held && t != peak;
          break;
        case Moment::kKernel:
          held = held && !DiesOnceCopied(buffer, step) && !(t == peak && partial);
          break;
        case Moment::kCollective:
          held = held && !freed_after_step(buffer, peak);
          break;
      }
    }
    liveness.held_at_peak[static_cast<size_t>(t)] = held;
  }
  for (const BufferInterval& copy : copies) {
    const bool freed_before_collective =
        peak_moment == Moment::kCollective &&
        copy.instruction == liveness.order[static_cast<size_t>(peak)] &&
        !lowered_steps.at(peak).copies_outlive_step;
    if (copy.live_at(peak) && !freed_before_collective) {
      liveness.peak_lowering_bytes += copy.bytes;
    }
  }
  if (peak_moment == Moment::kKernel || peak_moment == Moment::kCollective) {
    liveness.peak_lowering_bytes += lowered_steps.at(peak).lowered->unreduced_result_bytes;
  }
  return liveness;
}

}  // namespace alpa::cost
