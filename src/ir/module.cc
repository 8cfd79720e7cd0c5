#include "ir/module.h"

#include <unordered_set>

namespace alpa::ir {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  computation->set_parent(this);
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

Computation* Module::GetComputation(std::string_view name) const {
  for (const auto& computation : computations_) {
    if (computation->name() == name) return computation.get();
  }
  return nullptr;
}

std::vector<Computation*> Module::MakeComputationPostOrder() const {
  std::vector<Computation*> order;
  std::unordered_set<const Computation*> visited;
  // Iterative DFS over call edges, callees first, in the order instructions call them.
  struct Frame {
    Computation* computation;
    std::vector<Computation*> callees;
    size_t next = 0;
  };
  auto callees_of = [](const Computation* computation) {
    std::vector<Computation*> callees;
    for (const auto& instruction : computation->instructions()) {
      for (Computation* callee : instruction->called_computations()) callees.push_back(callee);
    }
    return callees;
  };
  if (entry_ == nullptr) return order;
  std::vector<Frame> stack;
  visited.insert(entry_);
  stack.push_back({entry_, callees_of(entry_)});
  while (!stack.empty()) {
    Frame& frame = stack.back();
    if (frame.next < frame.callees.size()) {
      Computation* callee = frame.callees[frame.next++];
      if (callee != nullptr && visited.insert(callee).second) {
        stack.push_back({callee, callees_of(callee)});
      }
      continue;
    }
    order.push_back(frame.computation);
    stack.pop_back();
  }
  return order;
}

int64_t Module::instruction_count() const {
  int64_t count = 0;
  for (const auto& computation : computations_) count += computation->instruction_count();
  return count;
}

}  // namespace alpa::ir
