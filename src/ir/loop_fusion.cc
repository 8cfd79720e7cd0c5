#include "ir/loop_fusion.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "ir/broadcast_folding.h"

namespace alpa::ir {

bool IsLoopUnaryOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kExp:
    case Opcode::kLog:
    case Opcode::kTanh:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kLogistic:
    case Opcode::kSin:
    case Opcode::kCos:
      return true;
    default:
      return false;
  }
}

bool IsLoopBinaryOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kPower:
      return true;
    default:
      return false;
  }
}

namespace {

// The operand types of a loop op with result type `dtype`, by the rules of loop_fusion.h.
bool LoopOperandTypes(const Instruction& instruction, DType dtype) {
  auto operand_type = [&](int64_t k) { return instruction.operand(k)->shape().dtype(); };
  const int64_t count = instruction.operand_count();
  const Opcode opcode = instruction.opcode();
  if (IsLoopUnaryOpcode(opcode)) {
    return count == 1 && IsF32F16OrBF16(dtype) && operand_type(0) == dtype;
  }
  if (IsLoopBinaryOpcode(opcode)) {
    return count == 2 && IsF32F16OrBF16(dtype) && operand_type(0) == dtype &&
           operand_type(1) == dtype;
  }
  switch (opcode) {
    case Opcode::kCompare: {
      const ComparisonType type = instruction.attributes().comparison_type;
      return count == 2 && dtype == DType::kPred && IsF32F16OrBF16(operand_type(0)) &&
             operand_type(1) == operand_type(0) &&
             (type == ComparisonType::kDefault || type == ComparisonType::kFloat);
    }
    case Opcode::kSelect:
      return count == 3 && IsF32F16OrBF16(dtype) && operand_type(0) == DType::kPred &&
             operand_type(1) == dtype && operand_type(2) == dtype;
    case Opcode::kConvert:
      return count == 1 && IsF32F16OrBF16(dtype) && operand_type(0) != dtype &&
             (IsF32F16OrBF16(operand_type(0)) || operand_type(0) == DType::kPred);
    default:
      return false;
  }
}

// What the schedule without loops says about the values a loop may take: each instruction's step
// (the post order), each value's one reader (nullptr once it has two), and each buffer's end,
// the last step reading it directly or through a broadcast read in place (the end of the
// schedule for the root, the program's output).
struct Schedule {
  std::unordered_map<const Instruction*, int64_t> step;
  std::unordered_map<const Instruction*, const Instruction*> only_reader;
  std::unordered_map<const Instruction*, int64_t> buffer_end;
  std::unordered_set<const Instruction*> read_in_place;
};

Schedule ScheduleOf(const Computation& computation) {
  Schedule schedule;
  schedule.read_in_place = BroadcastsReadInPlace(computation);
  const std::vector<Instruction*> order = computation.MakePostOrder();
  const int64_t end = static_cast<int64_t>(order.size());
  for (int64_t t = 0; t < end; ++t) {
    const Instruction* reader = order[static_cast<size_t>(t)];
    schedule.step.emplace(reader, t);
    // A parameter counts as freed after its last reader too: a caller may donate it (a pipeline
    // stage's inputs are freed once consumed, runtime/device_executor.h).
    schedule.buffer_end[reader] = std::max(schedule.buffer_end[reader], t);
    for (const Instruction* operand : reader->operands()) {
      schedule.buffer_end[operand] = std::max(schedule.buffer_end[operand], t);
      auto [it, first] = schedule.only_reader.emplace(operand, reader);
      if (!first && it->second != reader) it->second = nullptr;
    }
  }
  schedule.buffer_end[computation.root()] = end;
  for (const Instruction* broadcast : schedule.read_in_place) {
    int64_t& operand_end = schedule.buffer_end[broadcast->operand(0)];
    operand_end = std::max(operand_end, schedule.buffer_end.at(broadcast));
  }
  return schedule;
}

// A loop being grown from its root: its members (the root first) and the memory it would change.
// Running the loop at the root's step changes the bytes live at step t of the schedule without
// loops by
//
//   delta(t) = sum of bytes(l) over the array inputs l extended: end(l) < t <= step(root)
//            - sum of bytes(m) over the members m but the root: step(m) <= t <= step(reader(m))
//
// (an input read by nothing after the loop must now live until the loop ran; a member's buffer
// is never allocated). A member is added only if delta stays <= 0 at every step, so that a loop
// never raises the memory live at any step, and so never the peak, by more than the small
// inputs it keeps a few steps longer: scalars, and the operands of the broadcasts it reads (at
// most a 16th of one of its arrays, kMinFoldedRow, and in a training step a row statistic or a
// bias, a 1,000th of one). Counting those would refuse the common loop that swaps its last
// member's buffer for an input's at its root's step over the bytes of a learning rate.
class LoopTree {
 public:
  LoopTree(const Instruction* root, const Schedule& schedule)
      : members_{root}, schedule_(schedule) {}

  const std::vector<const Instruction*>& members() const { return members_; }
  bool Contains(const Instruction* value) const {
    return std::find(members_.begin(), members_.end(), value) != members_.end();
  }

  // Adds `values` (each read only by a member, or by an earlier one of `values`) if the loop
  // then still never raises the live memory; returns whether it did.
  bool TryAdd(const std::vector<const Instruction*>& values) {
    members_.insert(members_.end(), values.begin(), values.end());
    if (NeverRaisesMemory()) return true;
    members_.resize(members_.size() - values.size());
    return false;
  }

 private:
  bool NeverRaisesMemory() const {
    const int64_t root_step = schedule_.step.at(members_.front());
    std::map<int64_t, int64_t> changes;  // step -> change of delta from that step on
    std::unordered_set<const Instruction*> inputs;
    for (size_t i = 0; i < members_.size(); ++i) {
      const Instruction* member = members_[i];
      if (i > 0) {
        const int64_t bytes = member->shape().ByteSize();
        changes[schedule_.step.at(member)] -= bytes;
        changes[schedule_.step.at(schedule_.only_reader.at(member)) + 1] += bytes;
      }
      for (const Instruction* operand : member->operands()) {
        // The small inputs are left out: scalars, and the operands of the broadcasts read in
        // place (a row statistic or a bias, a row's or a column's worth of the loop's elements).
        if (Contains(operand) || operand->shape().rank() == 0 ||
            schedule_.read_in_place.contains(operand) || !inputs.insert(operand).second) {
          continue;
        }
        const int64_t end = schedule_.buffer_end.at(operand);
        if (end < root_step) {
          const int64_t bytes = operand->shape().ByteSize();
          changes[end + 1] += bytes;
          changes[root_step + 1] -= bytes;
        }
      }
    }
    int64_t delta = 0;
    for (const auto& [step, change] : changes) {
      delta += change;
      if (delta > 0) return false;
    }
    return true;
  }

  std::vector<const Instruction*> members_;
  const Schedule& schedule_;
};

}  // namespace

bool IsLoopOp(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return false;
  const bool same_dims =
      std::all_of(instruction.operands().begin(), instruction.operands().end(),
                  [&](const Instruction* operand) {
                    return operand->shape().IsArray() && operand->shape().dims() == shape.dims();
                  });
  return same_dims && LoopOperandTypes(instruction, shape.dtype());
}

std::unordered_set<const Instruction*> LoopFusedValues(const Computation& computation) {
  const Schedule schedule = ScheduleOf(computation);
  const std::vector<Instruction*> order = computation.MakePostOrder();
  std::unordered_set<const Instruction*> fused;
  // Roots before the values they read (reverse schedule order), so that a value is offered to
  // its reader's loop before it could root a loop of its own.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* root = *it;
    if (fused.contains(root) || !IsLoopOp(*root)) continue;
    // Whether `value` may join the loop as an operand of `reader`, a member.
    auto may_join = [&](const Instruction* value, const Instruction* reader) {
      const auto only = schedule.only_reader.find(value);
      return value != computation.root() && only != schedule.only_reader.end() &&
             only->second == reader && IsLoopOp(*value);
    };
    // `value` with every value that may join below it: offered whole first, since a value's
    // inputs may cost the loop memory that its own operands joining would give back.
    auto with_subtree = [&](const Instruction* value) {
      std::vector<const Instruction*> subtree = {value};
      for (size_t next = 0; next < subtree.size(); ++next) {
        for (const Instruction* operand : subtree[next]->operands()) {
          if (may_join(operand, subtree[next]) &&
              std::find(subtree.begin(), subtree.end(), operand) == subtree.end()) {
            subtree.push_back(operand);
          }
        }
      }
      return subtree;
    };
    LoopTree tree(root, schedule);
    for (size_t next = 0; next < tree.members().size(); ++next) {
      const Instruction* member = tree.members()[next];
      for (const Instruction* operand : member->operands()) {
        if (!may_join(operand, member) || tree.Contains(operand)) continue;
        if (!tree.TryAdd(with_subtree(operand))) tree.TryAdd({operand});
      }
    }
    for (size_t i = 1; i < tree.members().size(); ++i) fused.insert(tree.members()[i]);
  }
  return fused;
}

}  // namespace alpa::ir
