#include "ir/computation.h"

#include <unordered_set>

namespace alpa::ir {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  instruction->set_parent(this);
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

Instruction* Computation::GetInstruction(std::string_view name) const {
  for (const auto& instruction : instructions_) {
    if (instruction->name() == name) return instruction.get();
  }
  return nullptr;
}

std::vector<Instruction*> Computation::parameters() const {
  std::vector<Instruction*> parameters;
  for (const auto& instruction : instructions_) {
    if (instruction->opcode() != Opcode::kParameter) continue;
    int64_t number = instruction->attributes().parameter_number;
    if (number < 0) continue;
    if (static_cast<size_t>(number) >= parameters.size()) {
      parameters.resize(static_cast<size_t>(number) + 1, nullptr);
    }
    parameters[static_cast<size_t>(number)] = instruction.get();
  }
  return parameters;
}

ProgramShape Computation::ComputeProgramShape() const {
  ProgramShape program_shape;
  for (const Instruction* parameter : parameters()) {
    program_shape.parameters.push_back(parameter != nullptr ? parameter->shape() : Shape());
  }
  if (root_ != nullptr) program_shape.result = root_->shape();
  return program_shape;
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  std::unordered_set<const Instruction*> visited;
  // Iterative DFS: (instruction, next edge to follow). Edges are operands then control
  // predecessors. A cycle cannot make this loop forever: a node is expanded once.
  std::vector<std::pair<Instruction*, size_t>> stack;
  auto visit = [&](Instruction* start) {
    if (!visited.insert(start).second) return;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [node, edge] = stack.back();
      const size_t operand_count = node->operands().size();
      const size_t edge_count = operand_count + node->control_predecessors().size();
      if (edge < edge_count) {
        Instruction* next = edge < operand_count
                                ? node->operands()[edge]
                                : node->control_predecessors()[edge - operand_count];
        ++edge;
        if (visited.insert(next).second) stack.emplace_back(next, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  };
  for (const auto& instruction : instructions_) visit(instruction.get());
  return order;
}

namespace {

bool HasSideEffect(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return true;
    default:
      return instruction.attributes().custom_call_has_side_effect;
  }
}

}  // namespace

int64_t Computation::RemoveDeadInstructions() {
  std::unordered_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  auto keep = [&](const Instruction* instruction) {
    if (live.insert(instruction).second) stack.push_back(instruction);
  };
  if (root_ != nullptr) keep(root_);
  for (const auto& instruction : instructions_) {
    if (HasSideEffect(*instruction)) keep(instruction.get());
  }
  while (!stack.empty()) {
    const Instruction* instruction = stack.back();
    stack.pop_back();
    for (const Instruction* operand : instruction->operands()) keep(operand);
    for (const Instruction* predecessor : instruction->control_predecessors()) keep(predecessor);
  }
  const size_t before = instructions_.size();
  std::erase_if(instructions_,
                [&](const auto& instruction) { return live.count(instruction.get()) == 0; });
  return static_cast<int64_t>(before - instructions_.size());
}

std::optional<Opcode> ScalarBinaryOpcode(const Computation& computation, DType dtype) {
  const Shape scalar = Shape::Scalar(dtype);
  const std::vector<Instruction*> parameters = computation.parameters();
  if (parameters.size() != 2) return std::nullopt;
  for (const Instruction* p : parameters) {
    if (p == nullptr || !p->shape().Compatible(scalar)) return std::nullopt;
  }
  const Instruction* root = computation.root();
  if (root == nullptr || !root->shape().Compatible(scalar) || root->operand_count() != 2) {
    return std::nullopt;
  }
  const bool in_order = root->operand(0) == parameters[0] && root->operand(1) == parameters[1];
  const bool swapped = root->operand(0) == parameters[1] && root->operand(1) == parameters[0];
  if (!in_order && !swapped) return std::nullopt;
  return root->opcode();
}

InstructionIndex::InstructionIndex(const Computation& computation) {
  by_name_.reserve(computation.instructions().size());
  for (const auto& instruction : computation.instructions()) {
    by_name_.emplace(instruction->name(), instruction.get());
  }
}

const Instruction* InstructionIndex::Find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace alpa::ir
