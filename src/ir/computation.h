// A computation: an SSA graph of instructions with parameters and one root.
#ifndef ALPA_IR_COMPUTATION_H_
#define ALPA_IR_COMPUTATION_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/instruction.h"

namespace alpa::ir {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Takes ownership; the instruction's parent becomes this computation.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Instructions in insertion order (the order of the HLO text).
  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // nullptr if absent. Scans the instructions: a caller looking up many names builds an
  // InstructionIndex once instead.
  Instruction* GetInstruction(std::string_view name) const;

  // Hands over every instruction (the computation is left empty, its root unchanged), for a pass
  // that rebuilds the instruction list in a new order (call_inlining.h).
  std::vector<std::unique_ptr<Instruction>> TakeInstructions() { return std::move(instructions_); }

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // parameter(i) at index i. The verifier checks that the numbers are exactly 0..n-1; before
  // that, missing numbers are nullptr.
  std::vector<Instruction*> parameters() const;
  int64_t parameter_count() const { return static_cast<int64_t>(parameters().size()); }
  ProgramShape ComputeProgramShape() const;

  // Every instruction after its operands and control predecessors, as close to text order as
  // that allows: each instruction in text order, preceded by those of its operands (depth-first)
  // not yet placed. For a computation whose text order has operands first (every dump, and
  // every module our builders and passes emit) this is the text order itself. It is the schedule
  // the cost model prices and the runtime executes: the program's order, which XLA's list
  // scheduler also follows where memory does not argue otherwise. A depth-first order from the
  // root instead hoists each rematerialized forward instruction to the start of the backward
  // pass, which keeps the recomputed values live across it (Megatron's plan of GPT-3 6.7B, 4
  // layers, on 8 V100s: 12.5 GiB per device against 4.95; docs/cost-model.md). Deterministic.
  std::vector<Instruction*> MakePostOrder() const;

  // Removes the instructions whose value nothing uses: those the root does not reach through
  // operands and control predecessors, except parameters and instructions with side effects
  // (and what they reach). Program builders that emit values speculatively (autodiff's
  // recomputation) call it so that dead work is neither run nor counted. Returns how many went.
  int64_t RemoveDeadInstructions();

  // `execution_thread="..."` after the body, empty when absent.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  Module* parent() const { return parent_; }
  void set_parent(Module* parent) { parent_ = parent; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  Instruction* root_ = nullptr;
  std::string execution_thread_;
  Module* parent_ = nullptr;
};

// The opcode of `computation` when it is exactly one binary op of its two parameters, both scalars
// of `dtype` (`ROOT r = op(p0, p1)`, or `op(p1, p0)`, with the root a `dtype` scalar): how
// reducers are written. nullopt for anything else.
std::optional<Opcode> ScalarBinaryOpcode(const Computation& computation, DType dtype);

// The instructions of a computation by name, indexed in one pass: for a caller that looks up
// many names (GetInstruction scans the instructions each time). Valid while they live.
class InstructionIndex {
 public:
  explicit InstructionIndex(const Computation& computation);
  const Instruction* Find(std::string_view name) const;  // nullptr if absent

 private:
  std::unordered_map<std::string_view, const Instruction*> by_name_;
};

}  // namespace alpa::ir

#endif  // ALPA_IR_COMPUTATION_H_
