#include "ir/verifier.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/layer_boundary.h"
#include "ir/shape_inference.h"

namespace alpa::ir {
namespace {

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

Status CheckParameterNumbers(const Computation& computation) {
  std::vector<const Instruction*> parameters;
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode() == Opcode::kParameter) parameters.push_back(instruction.get());
  }
  const auto count = static_cast<int64_t>(parameters.size());
  std::map<int64_t, const Instruction*> by_number;
  for (const Instruction* parameter : parameters) {
    const int64_t number = parameter->attributes().parameter_number;
    if (number < 0 || number >= count) {
      return InvalidArgument(
          "parameter %{} has number {} but the computation has {} parameter(s), numbered 0..{}",
          parameter->name(), number, count, count - 1);
    }
    auto [it, inserted] = by_number.emplace(number, parameter);
    if (!inserted) {
      return InvalidArgument("parameters %{} and %{} both have number {}", it->second->name(),
                             parameter->name(), number);
    }
  }
  return Status::Ok();
}

Status CheckEdges(const Computation& computation, const Instruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Instruction* operand = instruction.operand(i);
    if (operand == nullptr) {
      return InvalidArgument("%{}: operand {} is missing", instruction.name(), i);
    }
    if (operand->parent() != &computation) {
      return InvalidArgument("%{}: operand {} (%{}) belongs to another computation",
                             instruction.name(), i, operand->name());
    }
  }
  for (const Instruction* predecessor : instruction.control_predecessors()) {
    if (predecessor == nullptr || predecessor->parent() != &computation) {
      return InvalidArgument("%{}: a control predecessor is missing or in another computation",
                             instruction.name());
    }
  }
  for (size_t i = 0; i < instruction.called_computations().size(); ++i) {
    if (instruction.called_computation(static_cast<int64_t>(i)) == nullptr) {
      return InvalidArgument("%{}: called computation {} is missing", instruction.name(), i);
    }
  }
  return Status::Ok();
}

// Iterative three-colour DFS over operand and control edges.
Status CheckAcyclic(const Computation& computation) {
  enum class Color { kWhite, kGrey, kBlack };
  std::map<const Instruction*, Color> color;
  for (const auto& start : computation.instructions()) {
    if (color[start.get()] != Color::kWhite) continue;
    std::vector<std::pair<const Instruction*, size_t>> stack = {{start.get(), 0}};
    color[start.get()] = Color::kGrey;
    while (!stack.empty()) {
      auto& [node, edge] = stack.back();
      const size_t operand_count = node->operands().size();
      if (edge < operand_count + node->control_predecessors().size()) {
        const Instruction* next = edge < operand_count
                                      ? node->operands()[edge]
                                      : node->control_predecessors()[edge - operand_count];
        ++edge;
        Color& next_color = color[next];
        if (next_color == Color::kGrey) {
          return InvalidArgument("%{} is part of a cycle (it depends on itself)", next->name());
        }
        if (next_color == Color::kWhite) {
          next_color = Color::kGrey;
          stack.emplace_back(next, 0);
        }
        continue;
      }
      color[node] = Color::kBlack;
      stack.pop_back();
    }
  }
  return Status::Ok();
}

bool HasNegativeDim(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HasNegativeDim(element)) return true;
    }
    return false;
  }
  for (int64_t d : shape.dims()) {
    if (d < 0) return true;
  }
  return false;
}

Status CheckShape(const Instruction& instruction) {
  if (HasNegativeDim(instruction.shape())) {
    return InvalidArgument("%{}: shape {} has a negative dimension", instruction.name(),
                           Str(instruction.shape()));
  }
  ALPA_ASSIGN_OR_RETURN(Shape inferred, InferShape(instruction));
  if (!inferred.Compatible(instruction.shape())) {
    return InvalidArgument("{} %{}: declared shape {} does not match the inferred shape {}",
                           OpcodeName(instruction.opcode()), instruction.name(),
                           Str(instruction.shape()), Str(inferred));
  }
  return Status::Ok();
}

// Diagnostics start with the place: "FILE:LINE:COLUMN" of the instruction when it was parsed from
// text, else "FILE" of the module, else nothing (a module built in C++).
std::string Place(const Module* module, const Instruction* instruction) {
  const std::string file = module != nullptr ? module->source_file() : "";
  if (instruction != nullptr && instruction->location().known()) {
    return fmt::format("{}:{}:{}", file.empty() ? "<input>" : file, instruction->location().line,
                       instruction->location().column);
  }
  return file;
}

Status At(const std::string& place, const Status& status) {
  return place.empty() ? status : status.WithContext(place);
}

// Computation names are unique in the module, instruction names within their computation: XLA's
// parser scopes instruction names per computation, and its own tests reuse %p0 in a fusion and
// in the entry.
Status CheckNames(const Module& module) {
  std::set<std::string> computations;
  for (const auto& computation : module.computations()) {
    if (!computations.insert(computation->name()).second) {
      return InvalidArgument("two computations are named %{}", computation->name());
    }
    std::set<std::string> instructions;
    for (const auto& instruction : computation->instructions()) {
      if (!instructions.insert(instruction->name()).second) {
        return InvalidArgument("computation %{}: two instructions are named %{}",
                               computation->name(), instruction->name());
      }
    }
  }
  return Status::Ok();
}

// Every callee belongs to the module, and no computation calls itself, directly or not.
Status CheckCallGraph(const Module& module) {
  std::map<const Computation*, std::vector<const Computation*>> callees;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (callee == nullptr) continue;  // reported by VerifyComputation
        if (callee->parent() != &module) {
          return InvalidArgument("computation %{}: %{} calls %{}, which is not in the module",
                                 computation->name(), instruction->name(), callee->name());
        }
        callees[computation.get()].push_back(callee);
      }
    }
  }
  enum class Color { kWhite, kGrey, kBlack };
  std::map<const Computation*, Color> color;
  for (const auto& start : module.computations()) {
    if (color[start.get()] != Color::kWhite) continue;
    std::vector<std::pair<const Computation*, size_t>> stack = {{start.get(), 0}};
    color[start.get()] = Color::kGrey;
    while (!stack.empty()) {
      auto& [node, edge] = stack.back();
      const std::vector<const Computation*>& next_list = callees[node];
      if (edge < next_list.size()) {
        const Computation* next = next_list[edge++];
        if (color[next] == Color::kGrey) {
          return InvalidArgument("computation %{} calls itself (recursion is not allowed)",
                                 next->name());
        }
        if (color[next] == Color::kWhite) {
          color[next] = Color::kGrey;
          stack.emplace_back(next, 0);
        }
        continue;
      }
      color[node] = Color::kBlack;
      stack.pop_back();
    }
  }
  return Status::Ok();
}

}  // namespace

Status VerifyComputation(const Computation& computation) {
  const Module* module = computation.parent();
  const std::string context = fmt::format("computation %{}", computation.name());
  auto fail = [&](const Instruction* instruction, const Status& status) {
    return At(Place(module, instruction), status.WithContext(context));
  };
  if (computation.root() == nullptr) {
    return fail(nullptr, InvalidArgument("has no root instruction"));
  }
  if (computation.root()->parent() != &computation) {
    return fail(nullptr, InvalidArgument("root %{} belongs to another computation",
                                         computation.root()->name()));
  }
  if (Status status = CheckParameterNumbers(computation); !status.ok()) {
    return fail(nullptr, status);
  }
  for (const auto& instruction : computation.instructions()) {
    if (Status status = CheckEdges(computation, *instruction); !status.ok()) {
      return fail(instruction.get(), status);
    }
  }
  if (Status status = CheckAcyclic(computation); !status.ok()) return fail(nullptr, status);
  for (const Instruction* instruction : computation.MakePostOrder()) {
    if (Status status = CheckShape(*instruction); !status.ok()) return fail(instruction, status);
    if (Status status = CheckLayerBoundary(*instruction); !status.ok()) {
      return fail(instruction, status);
    }
  }
  return Status::Ok();
}

Status VerifyModule(const Module& module) {
  const std::string place = Place(&module, nullptr);
  const std::string context = fmt::format("module {}", module.name());
  const Computation* entry = module.entry();
  if (entry == nullptr) {
    return At(place, InvalidArgument("has no entry computation").WithContext(context));
  }
  if (entry->parent() != &module) {
    return At(place, InvalidArgument("entry computation %{} is not in the module", entry->name())
                         .WithContext(context));
  }
  ALPA_RETURN_IF_ERROR(At(place, CheckNames(module).WithContext(context)));
  ALPA_RETURN_IF_ERROR(At(place, CheckCallGraph(module).WithContext(context)));
  for (const auto& computation : module.computations()) {
    ALPA_RETURN_IF_ERROR(VerifyComputation(*computation));
  }
  return Status::Ok();
}

}  // namespace alpa::ir
