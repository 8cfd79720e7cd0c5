#include "ir/call_inlining.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "ir/post_order_rebuild.h"

namespace alpa::ir {
namespace {

class Inliner {
 public:
  explicit Inliner(Computation& computation) : computation_(computation) {}

  int64_t Run() {
    RebuildInPostOrder(computation_, [this](std::unique_ptr<Instruction> instruction) {
      if (instruction->opcode() == Opcode::kCall) return Inline(*instruction, instruction->name());
      return computation_.AddInstruction(std::move(instruction));
    });
    return inlined_;
  }

 private:
  // Copies the callee of `call` (its operands already the rebuilt computation's) into the
  // computation; returns the copy of its root. Calls in the callee are inlined as they are
  // reached.
  Instruction* Inline(const Instruction& call, const std::string& prefix) {
    ++inlined_;
    const Computation& callee = *call.to_apply();
    std::map<const Instruction*, Instruction*> copies;
    for (const Instruction* instruction : callee.MakePostOrder()) {
      if (instruction->opcode() == Opcode::kParameter) {
        copies[instruction] = call.operand(instruction->attributes().parameter_number);
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
        copies[instruction] = Inline(*copy, copy->name());
        continue;
      }
      copies[instruction] = computation_.AddInstruction(std::move(copy));
    }
    return copies.at(callee.root());
  }

  Computation& computation_;
  int64_t inlined_ = 0;
};

}  // namespace

int64_t InlineCalls(Computation& computation) { return Inliner(computation).Run(); }

}  // namespace alpa::ir
