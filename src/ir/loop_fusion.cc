#include "ir/loop_fusion.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "ir/broadcast_folding.h"

namespace alpa::ir {
namespace {

bool IsLoopOpcode(Opcode opcode) {
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

// Whether a loop reads every operand of `instruction` as a whole array or one repeated value:
// none is a broadcast read in place from anything but a scalar.
bool ReadsWholeOrRepeated(const Instruction& instruction,
                          const std::unordered_set<const Instruction*>& read_in_place) {
  return std::none_of(instruction.operands().begin(), instruction.operands().end(),
                      [&](const Instruction* operand) {
                        return read_in_place.contains(operand) &&
                               operand->operand(0)->shape().rank() > 0;
                      });
}

// A loop being grown from its root: its members (the root first) and the memory it would change.
// Every member and every input that is not a scalar has the root's dimensions and type, so each
// holds the same bytes b; in units of b, running the loop at the root's step changes the bytes
// live at step t of the schedule without loops by
//
//   delta(t) = #{inputs l extended: last_use(l) < t <= step(root)}
//            - #{members m but the root: step(m) <= t <= step(reader(m))}
//
// (an input read by nothing after the loop must now live until the loop ran; a member's buffer
// is never allocated). A member is added only if delta stays <= 0 at every step, so that a loop
// never raises the memory live at any step, and so never the peak.
class LoopTree {
 public:
  LoopTree(const Instruction* root, const std::unordered_map<const Instruction*, int64_t>& position,
           const std::unordered_map<const Instruction*, int64_t>& last_use,
           const std::unordered_set<const Instruction*>& read_in_place)
      : members_{root}, position_(position), last_use_(last_use), read_in_place_(read_in_place) {}

  const std::vector<const Instruction*>& members() const { return members_; }
  bool Contains(const Instruction* value) const {
    return std::find(members_.begin(), members_.end(), value) != members_.end();
  }

  // Adds `values` (read by members only, the first by one already in the loop, each later one
  // by an earlier one) if the loop then still never raises the live memory; returns whether it
  // did.
  bool TryAdd(const std::vector<const Instruction*>& values) {
    members_.insert(members_.end(), values.begin(), values.end());
    if (NeverRaisesMemory()) return true;
    members_.resize(members_.size() - values.size());
    return false;
  }

 private:
  bool NeverRaisesMemory() const {
    const int64_t root_step = position_.at(members_.front());
    std::map<int64_t, int64_t> changes;  // step -> change of delta from that step on
    std::unordered_set<const Instruction*> inputs;
    for (size_t i = 0; i < members_.size(); ++i) {
      const Instruction* member = members_[i];
      if (i > 0) {
        --changes[position_.at(member)];
        ++changes[ReaderStep(member) + 1];
      }
      for (const Instruction* operand : member->operands()) {
        // Scalars cost nothing to keep, nor do the broadcasts read in place, which stand for
        // theirs (ReadsWholeOrRepeated).
        if (Contains(operand) || operand->shape().rank() == 0 || read_in_place_.contains(operand) ||
            !inputs.insert(operand).second) {
          continue;
        }
        const int64_t last = last_use_.at(operand);
        if (last < root_step) {
          ++changes[last + 1];
          --changes[root_step + 1];
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

  // The step of the member that reads `member` (its one reader).
  int64_t ReaderStep(const Instruction* member) const {
    for (const Instruction* reader : members_) {
      const auto& operands = reader->operands();
      if (std::find(operands.begin(), operands.end(), member) != operands.end()) {
        return position_.at(reader);
      }
    }
    return position_.at(members_.front());
  }

  std::vector<const Instruction*> members_;
  const std::unordered_map<const Instruction*, int64_t>& position_;
  const std::unordered_map<const Instruction*, int64_t>& last_use_;
  const std::unordered_set<const Instruction*>& read_in_place_;
};

}  // namespace

bool IsLoopOp(const Instruction& instruction) {
  if (!IsLoopOpcode(instruction.opcode())) return false;
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return false;
  const DType dtype = shape.dtype();
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) return false;
  return std::all_of(instruction.operands().begin(), instruction.operands().end(),
                     [&](const Instruction* operand) {
                       const Shape& operand_shape = operand->shape();
                       return operand_shape.IsArray() && operand_shape.dtype() == dtype &&
                              operand_shape.dims() == shape.dims();
                     });
}

std::unordered_set<const Instruction*> LoopFusedValues(const Computation& computation) {
  const std::unordered_set<const Instruction*> read_in_place = BroadcastsReadInPlace(computation);
  auto hosts_loop = [&](const Instruction& instruction) {
    return IsLoopOp(instruction) && ReadsWholeOrRepeated(instruction, read_in_place);
  };
  const std::vector<Instruction*> order = computation.MakePostOrder();
  const int64_t end = static_cast<int64_t>(order.size());
  std::unordered_map<const Instruction*, int64_t> position;
  for (int64_t t = 0; t < end; ++t) position.emplace(order[static_cast<size_t>(t)], t);
  // Per value: its last reader's step in the schedule without loops (the end for the root, the
  // program's output), and its one reader, or nullptr once it has two. A parameter counts as
  // freed after its last reader too: a caller may donate it (a pipeline stage's inputs are freed
  // once consumed, runtime/device_executor.h).
  std::unordered_map<const Instruction*, int64_t> last_use;
  std::unordered_map<const Instruction*, const Instruction*> only_reader;
  for (int64_t t = 0; t < end; ++t) {
    const Instruction* reader = order[static_cast<size_t>(t)];
    last_use[reader] = std::max(last_use[reader], t);
    for (const Instruction* operand : reader->operands()) {
      last_use[operand] = std::max(last_use[operand], t);
      auto [it, first] = only_reader.emplace(operand, reader);
      if (!first && it->second != reader) it->second = nullptr;
    }
  }
  last_use[computation.root()] = end;

  std::unordered_set<const Instruction*> fused;
  // Roots before the values they read (reverse schedule order), so that a value is offered to
  // its reader's loop before it could root a loop of its own.
  for (int64_t t = end - 1; t >= 0; --t) {
    const Instruction* root = order[static_cast<size_t>(t)];
    if (fused.contains(root) || !hosts_loop(*root)) continue;
    // Whether `value` may join the loop as an operand of `reader`, a member.
    auto may_join = [&](const Instruction* value, const Instruction* reader) {
      const auto only = only_reader.find(value);
      return value != computation.root() && only != only_reader.end() && only->second == reader &&
             hosts_loop(*value);
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
    LoopTree tree(root, position, last_use, read_in_place);
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
