#include "ir/post_order_rebuild.h"

#include <map>
#include <utility>
#include <vector>

namespace alpa::ir {

void RebuildInPostOrder(Computation& computation,
                        const std::function<Instruction*(std::unique_ptr<Instruction>)>& place) {
  const std::vector<Instruction*> order = computation.MakePostOrder();
  std::map<const Instruction*, std::unique_ptr<Instruction>> owned;
  for (std::unique_ptr<Instruction>& instruction : computation.TakeInstructions()) {
    owned[instruction.get()] = std::move(instruction);
  }
  std::map<const Instruction*, Instruction*> replaced;  // original -> what stands for it
  for (Instruction* instruction : order) {
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      instruction->ReplaceOperand(i, replaced.at(instruction->operand(i)));
    }
    for (Instruction*& predecessor : instruction->mutable_control_predecessors()) {
      predecessor = replaced.at(predecessor);
    }
    replaced[instruction] = place(std::move(owned.at(instruction)));
  }
  computation.set_root(replaced.at(computation.root()));
}

}  // namespace alpa::ir
