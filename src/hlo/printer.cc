#include "hlo/printer.h"

#include <fmt/format.h>

#include <unordered_set>

#include "hlo/attribute_printer.h"
#include "hlo/lexer.h"

namespace alpa::hlo {
namespace {

// `%name (p0: f32[8], p1: f32[]) -> f32[8] {` body `}`. Instructions in the computation's order
// (the text order of a parsed module), so print(parse(print(m))) is byte-identical to print(m);
// the computation order below depends on it.
void AppendComputation(const ir::Computation& computation, bool is_entry, std::string& out) {
  if (is_entry) out += "ENTRY ";
  out += fmt::format("%{} (", computation.name());
  bool first = true;
  for (const ir::Instruction* parameter : computation.parameters()) {
    if (parameter == nullptr) continue;
    if (!first) out += ", ";
    first = false;
    out += fmt::format("{}: {}", parameter->name(), parameter->shape().ToString(false));
  }
  out += ") -> ";
  out += computation.root() != nullptr ? computation.root()->shape().ToString(false) : "()";
  out += " {\n";
  for (const auto& instruction : computation.instructions()) {
    out += instruction.get() == computation.root() ? "  ROOT " : "  ";
    out += PrintInstruction(*instruction);
    out += "\n";
  }
  out += "}";
  if (!computation.execution_thread().empty()) {
    out += ", execution_thread=" + EscapeString(computation.execution_thread());
  }
}

// Callees before callers, the entry last. Computations the entry does not reach are placed
// before the entry, each after its own callees, in the order they were added to the module.
std::vector<const ir::Computation*> PrintOrder(const ir::Module& module) {
  std::vector<ir::Computation*> reachable = module.MakeComputationPostOrder();
  std::unordered_set<const ir::Computation*> placed(reachable.begin(), reachable.end());
  std::vector<const ir::Computation*> unreachable;
  for (const auto& root : module.computations()) {
    if (placed.count(root.get()) > 0) continue;
    // Iterative DFS post order over call edges from `root`.
    std::vector<std::pair<const ir::Computation*, std::vector<const ir::Computation*>>> stack;
    auto callees_of = [](const ir::Computation* computation) {
      std::vector<const ir::Computation*> callees;
      for (const auto& instruction : computation->instructions()) {
        for (const ir::Computation* callee : instruction->called_computations()) {
          callees.push_back(callee);
        }
      }
      return callees;
    };
    placed.insert(root.get());
    stack.emplace_back(root.get(), callees_of(root.get()));
    while (!stack.empty()) {
      auto& [computation, callees] = stack.back();
      if (!callees.empty()) {
        const ir::Computation* next = callees.front();
        callees.erase(callees.begin());
        if (next != nullptr && placed.insert(next).second) {
          stack.emplace_back(next, callees_of(next));
        }
        continue;
      }
      unreachable.push_back(computation);
      stack.pop_back();
    }
  }
  std::vector<const ir::Computation*> order(reachable.begin(), reachable.end());
  const auto entry_position = order.empty() ? order.end() : order.end() - 1;
  order.insert(entry_position, unreachable.begin(), unreachable.end());
  return order;
}

}  // namespace

std::string PrintInstruction(const ir::Instruction& instruction) {
  std::string out = fmt::format("%{} = {} {}(", instruction.name(), instruction.shape().ToString(),
                                ir::OpcodeName(instruction.opcode()));
  const ir::Attributes& attributes = instruction.attributes();
  if (instruction.opcode() == ir::Opcode::kParameter) {
    out += std::to_string(attributes.parameter_number);
  } else if (instruction.opcode() == ir::Opcode::kConstant) {
    out += attributes.literal.has_value() ? attributes.literal->ToString() : "{...}";
  } else {
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (i > 0) out += ", ";
      out += "%" + instruction.operand(i)->name();
    }
  }
  out += ")";
  internal::AppendAttributes(instruction, out);
  return out;
}

std::string PrintModule(const ir::Module& module) {
  const ir::ModuleConfig& config = module.config();
  std::string out = "HloModule " + module.name();
  if (config.is_scheduled) out += ", is_scheduled=true";
  if (config.entry_computation_layout.has_value()) {
    out += fmt::format(", entry_computation_layout={{{}}}",
                       config.entry_computation_layout->ToString());
  }
  for (const auto& [key, raw] : config.opaque) out += fmt::format(", {}={}", key, raw);
  if (config.replica_count.has_value()) out += fmt::format(", replica_count={}", *config.replica_count);
  if (config.num_partitions.has_value()) {
    out += fmt::format(", num_partitions={}", *config.num_partitions);
  }
  out += "\n";
  for (const ir::Computation* computation : PrintOrder(module)) {
    out += "\n";
    AppendComputation(*computation, computation == module.entry(), out);
    out += "\n";
  }
  return out;
}

}  // namespace alpa::hlo
