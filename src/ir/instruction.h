// An HLO instruction: opcode, result shape, operands, called computations and typed attributes.
#ifndef ALPA_IR_INSTRUCTION_H_
#define ALPA_IR_INSTRUCTION_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/opcode.h"
#include "ir/shape.h"

namespace alpa::ir {

class Computation;

// Where an instruction was defined in the text it was parsed from, 1-based; line 0 for one built in
// C++. Diagnostics print it as FILE:LINE:COLUMN with the module's source_file() (MLIR's
// FileLineColLoc), so an error found after parsing still points into the user's file.
struct SourceLocation {
  int64_t line = 0;
  int64_t column = 0;
  bool known() const { return line > 0; }
};

class Instruction {
 public:
  Instruction(std::string name, Opcode opcode, Shape shape)
      : name_(std::move(name)), opcode_(opcode), shape_(std::move(shape)) {}
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  void set_shape(Shape shape) { shape_ = std::move(shape); }

  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(Instruction* operand) { operands_.push_back(operand); }
  void ReplaceOperand(int64_t i, Instruction* operand) {
    operands_[static_cast<size_t>(i)] = operand;
  }

  // Called computations, in the order of the roles below.
  //   reduce, reduce-window, map, sort, scatter, all-reduce(-start), reduce-scatter, call,
  //   custom-call (called_computations=): to_apply / calls
  //   fusion, async-start: calls
  //   while: condition, body
  //   select-and-scatter: select, scatter
  //   conditional: branch 0, 1, ... (a pred selector means branch 0 = true_computation)
  const std::vector<Computation*>& called_computations() const { return called_computations_; }
  Computation* called_computation(int64_t i) const {
    return called_computations_[static_cast<size_t>(i)];
  }
  void AppendCalledComputation(Computation* computation) {
    called_computations_.push_back(computation);
  }
  void ReplaceCalledComputation(int64_t i, Computation* computation) {
    called_computations_[static_cast<size_t>(i)] = computation;
  }
  Computation* to_apply() const { return called_computation(0); }
  Computation* while_condition() const { return called_computation(0); }
  Computation* while_body() const { return called_computation(1); }

  // Ordering edges without data (`control-predecessors={%a}`).
  const std::vector<Instruction*>& control_predecessors() const { return control_predecessors_; }
  void AddControlPredecessor(Instruction* predecessor) {
    control_predecessors_.push_back(predecessor);
  }
  std::vector<Instruction*>& mutable_control_predecessors() { return control_predecessors_; }

  const Attributes& attributes() const { return attributes_; }
  Attributes& mutable_attributes() { return attributes_; }

  const SourceLocation& location() const { return location_; }
  void set_location(SourceLocation location) { location_ = location; }

  // The computation that owns this instruction.
  Computation* parent() const { return parent_; }
  void set_parent(Computation* parent) { parent_ = parent; }

 private:
  std::string name_;
  Opcode opcode_;
  Shape shape_;
  std::vector<Instruction*> operands_;
  std::vector<Computation*> called_computations_;
  std::vector<Instruction*> control_predecessors_;
  Attributes attributes_;
  SourceLocation location_;
  Computation* parent_ = nullptr;
};

}  // namespace alpa::ir

#endif  // ALPA_IR_INSTRUCTION_H_
