#include "ir/call_inlining.h"

#include <map>

namespace alpa::ir {
namespace {

class Inliner {
 public:
  explicit Inliner(Computation& computation) : computation_(computation) {}

  int64_t Run() {
    const std::vector<Instruction*> order = computation_.MakePostOrder();
    std::map<const Instruction*, std::unique_ptr<Instruction>> owned;
    for (std::unique_ptr<Instruction>& instruction : computation_.TakeInstructions()) {
      owned[instruction.get()] = std::move(instruction);
    }
    for (Instruction* instruction : order) {
      if (instruction->opcode() == Opcode::kCall) {
        mapped_[instruction] = Inline(*instruction, instruction->name());
        continue;
      }
      Remap(*instruction);
      mapped_[instruction] = computation_.AddInstruction(std::move(owned.at(instruction)));
    }
    computation_.set_root(mapped_.at(computation_.root()));
    return inlined_;
  }

 private:
  // Points the instruction's operands and control predecessors at what replaced them.
  void Remap(Instruction& instruction) {
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      instruction.ReplaceOperand(i, mapped_.at(instruction.operand(i)));
    }
    std::vector<Instruction*> predecessors = instruction.control_predecessors();
    instruction.mutable_control_predecessors().clear();
    for (Instruction* predecessor : predecessors) {
      instruction.AddControlPredecessor(mapped_.at(predecessor));
    }
  }

  // Copies the callee of `call` into the computation; returns the copy of its root. Calls in the
  // callee are inlined as they are reached.
  Instruction* Inline(const Instruction& call, const std::string& prefix) {
    ++inlined_;
    const Computation& callee = *call.to_apply();
    std::map<const Instruction*, Instruction*> copies;
    for (const Instruction* instruction : callee.MakePostOrder()) {
      if (instruction->opcode() == Opcode::kParameter) {
        copies[instruction] = mapped_.at(call.operand(instruction->attributes().parameter_number));
        continue;
      }
      auto copy = std::make_unique<Instruction>(prefix + "." + instruction->name(),
                                                instruction->opcode(), instruction->shape());
      for (const Instruction* operand : instruction->operands()) {
        copy->AppendOperand(copies.at(operand));
      }
      for (Computation* called : instruction->called_computations()) {
        copy->AppendCalledComputation(called);
      }
      for (const Instruction* predecessor : instruction->control_predecessors()) {
        copy->AddControlPredecessor(copies.at(predecessor));
      }
      copy->mutable_attributes() = instruction->attributes();
      copy->set_location(instruction->location());
      if (copy->opcode() == Opcode::kCall) {
        // Its operands are copies already; inline it under its own (prefixed) name.
        for (int64_t i = 0; i < copy->operand_count(); ++i)
          mapped_[copy->operand(i)] = copy->operand(i);
        copies[instruction] = Inline(*copy, copy->name());
        continue;
      }
      copies[instruction] = computation_.AddInstruction(std::move(copy));
    }
    return copies.at(callee.root());
  }

  Computation& computation_;
  std::map<const Instruction*, Instruction*> mapped_;  // original (or copy) -> its replacement
  int64_t inlined_ = 0;
};

}  // namespace

int64_t InlineCalls(Computation& computation) { return Inliner(computation).Run(); }

}  // namespace alpa::ir
