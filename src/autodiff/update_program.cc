#include "autodiff/update_program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <utility>

namespace alpa::autodiff {

using ir::Instruction;

namespace {

// The weights a value reads: none, one, or (for the error) the first two of several.
struct Reads {
  int64_t first = -1;
  int64_t second = -1;

  bool several() const { return second >= 0; }
  void Add(const Reads& other) {
    for (int64_t w : {other.first, other.second}) {
      if (w < 0 || w == first || w == second) continue;
      if (first < 0) {
        first = w;
      } else if (second < 0) {
        second = w;
      }
    }
  }
};

// The program's results W'..., S'...: the root tuple's elements, or the root alone when the
// program has one result.
std::vector<const Instruction*> Results(const ir::Computation& entry) {
  const Instruction* root = entry.root();
  if (root->opcode() != ir::Opcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

// What every instruction of `entry` reads, given what each parameter is.
std::map<const Instruction*, Reads> PropagateReads(const ir::Computation& entry,
                                                   const std::vector<Reads>& parameter_reads) {
  std::map<const Instruction*, Reads> reads;
  for (const Instruction* instruction : entry.MakePostOrder()) {
    Reads& mine = reads[instruction];
    if (instruction->opcode() == ir::Opcode::kParameter) {
      mine = parameter_reads[static_cast<size_t>(instruction->attributes().parameter_number)];
      continue;
    }
    for (const Instruction* operand : instruction->operands()) mine.Add(reads.at(operand));
  }
  return reads;
}

Status CheckForm(const ir::Computation& entry, int64_t n) {
  const std::vector<Instruction*> parameters = entry.parameters();
  const int64_t m = static_cast<int64_t>(parameters.size()) - 2 * n;
  if (n < 1 || m < 0) {
    return InvalidArgument(
        "the update program has {} parameters; for {} weights it needs the weights, their "
        "gradients and then the optimizer's state",
        parameters.size(), n);
  }
  const std::vector<const Instruction*> results = Results(entry);
  if (static_cast<int64_t>(results.size()) != n + m) {
    return InvalidArgument(
        "the update program returns {} values; it needs the {} weights' next values and then "
        "its {} states'",
        results.size(), n, m);
  }
  for (int64_t k = 0; k < n + m; ++k) {
    const Instruction& value = *parameters[static_cast<size_t>(k < n ? k : n + k)];
    const Instruction& next = *results[static_cast<size_t>(k)];
    const Instruction* gradient = k < n ? parameters[static_cast<size_t>(n + k)] : nullptr;
    if (!value.shape().IsArray() || !(value.shape() == next.shape()) ||
        (gradient != nullptr && !(gradient->shape() == value.shape()))) {
      return InvalidArgument("the update program's {} {} (%{}: {}) {}", k < n ? "weight" : "state",
                             k < n ? k : k - n, value.name(), value.shape().ToString(false),
                             gradient != nullptr && !(gradient->shape() == value.shape())
                                 ? "has a gradient of another shape"
                                 : "has a next value of another shape");
    }
  }
  return Status::Ok();
}

Status CouplingError(const std::string& what, const Reads& reads) {
  return InvalidArgument(
      "the optimizer's {} reads weights {} and {} together (as optax.clip_by_global_norm does); "
      "a pipeline updates each weight on its own stage, so every value of the update must read "
      "one weight at most",
      what, reads.first, reads.second);
}

}  // namespace

const ir::Shape& UpdateProgram::weight_shape(int64_t i) const {
  return module->entry()->parameters()[static_cast<size_t>(i)]->shape();
}

const ir::Shape& UpdateProgram::state_shape(int64_t j) const {
  return module->entry()->parameters()[static_cast<size_t>(2 * num_weights + j)]->shape();
}

Result<UpdateProgram> SplitUpdateProgram(std::shared_ptr<const ir::Module> module,
                                         int64_t num_weights) {
  if (module == nullptr || module->entry() == nullptr) {
    return InvalidArgument("the update program has no entry computation");
  }
  const ir::Computation& entry = *module->entry();
  ALPA_RETURN_IF_ERROR(CheckForm(entry, num_weights));
  const int64_t n = num_weights;
  const int64_t m = entry.parameter_count() - 2 * n;
  const std::vector<const Instruction*> results = Results(entry);

  // 1. The weights each state's next value reads, the states themselves not counted: its owner.
  std::vector<Reads> parameter_reads(static_cast<size_t>(2 * n + m));
  for (int64_t i = 0; i < n; ++i) {
    parameter_reads[static_cast<size_t>(i)].first = i;
    parameter_reads[static_cast<size_t>(n + i)].first = i;
  }
  std::map<const Instruction*, Reads> reads = PropagateReads(entry, parameter_reads);
  UpdateProgram program;
  program.num_weights = n;
  program.weight_states.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < m; ++j) {
    const Reads& owner = reads.at(results[static_cast<size_t>(n + j)]);
    if (owner.several()) return CouplingError(fmt::format("next value of state {}", j), owner);
    if (owner.first < 0) {
      program.shared_states.push_back(j);
    } else {
      program.weight_states[static_cast<size_t>(owner.first)].push_back(j);
    }
    parameter_reads[static_cast<size_t>(2 * n + j)] = owner;
  }
  // 2. With each state read as its owner's: every next value reads its own weight's values only
  // (a shared state's none), so the stages' slices are independent.
  reads = PropagateReads(entry, parameter_reads);
  for (int64_t k = 0; k < n + m; ++k) {
    const Reads& read = reads.at(results[static_cast<size_t>(k)]);
    const int64_t owner = k < n ? k : parameter_reads[static_cast<size_t>(n + k)].first;
    const std::string what = k < n ? fmt::format("update of weight {}", k)
                                   : fmt::format("next value of state {}", k - n);
    if (read.several()) return CouplingError(what, read);
    if (read.first >= 0 && owner < 0) {
      return InvalidArgument(
          "the optimizer's state {} is shared by every weight (its gradient-free part reads no "
          "weight) but its next value reads weight {}'s state; a pipeline keeps a copy of a "
          "shared state on every stage, so it must read shared states only",
          k - n, read.first);
    }
    if (read.first >= 0 && read.first != owner) {
      return CouplingError(what, Reads{.first = owner, .second = read.first});
    }
  }
  program.module = std::move(module);
  return program;
}

Result<EmittedUpdate> EmitProgramUpdate(const UpdateProgram& program,
                                        const std::vector<int64_t>& weights,
                                        const std::vector<ir::Instruction*>& values,
                                        const std::vector<ir::Instruction*>& gradients,
                                        const std::vector<std::vector<ir::Instruction*>>& states,
                                        const std::vector<ir::Instruction*>& shared,
                                        ir::ComputationBuilder& b) {
  const ir::Computation& entry = *program.module->entry();
  const std::vector<Instruction*> parameters = entry.parameters();
  const std::vector<const Instruction*> results = Results(entry);
  const int64_t n = program.num_weights;
  if (values.size() != weights.size() || gradients.size() != weights.size() ||
      states.size() != weights.size() || shared.size() != program.shared_states.size()) {
    return InvalidArgument("EmitProgramUpdate: values for {} weights and {} shared states",
                           weights.size(), program.shared_states.size());
  }
  // What each parameter is in `b`, and which results to compute.
  std::map<const Instruction*, Instruction*> copy;
  std::vector<const Instruction*> wanted;
  for (size_t k = 0; k < weights.size(); ++k) {
    const int64_t i = weights[k];
    if (i < 0 || i >= n) return InvalidArgument("the update program has no weight {}", i);
    const std::vector<int64_t>& own = program.weight_states[static_cast<size_t>(i)];
    if (states[k].size() != own.size()) {
      return InvalidArgument("weight {} of the update program has {} states, not {}", i, own.size(),
                             states[k].size());
    }
    copy[parameters[static_cast<size_t>(i)]] = values[k];
    copy[parameters[static_cast<size_t>(n + i)]] = gradients[k];
    wanted.push_back(results[static_cast<size_t>(i)]);
    for (size_t s = 0; s < own.size(); ++s) {
      copy[parameters[static_cast<size_t>(2 * n + own[s])]] = states[k][s];
      wanted.push_back(results[static_cast<size_t>(n + own[s])]);
    }
  }
  for (size_t s = 0; s < shared.size(); ++s) {
    const int64_t j = program.shared_states[s];
    copy[parameters[static_cast<size_t>(2 * n + j)]] = shared[s];
    wanted.push_back(results[static_cast<size_t>(n + j)]);
  }
  // The instructions the wanted results read, copied in post order.
  std::map<const Instruction*, bool> needed;
  for (std::vector<const Instruction*> stack = wanted; !stack.empty();) {
    const Instruction* x = stack.back();
    stack.pop_back();
    if (needed[x]) continue;
    needed[x] = true;
    for (const Instruction* operand : x->operands()) stack.push_back(operand);
  }
  for (const Instruction* instruction : entry.MakePostOrder()) {
    if (!needed[instruction]) continue;
    if (instruction->opcode() == ir::Opcode::kParameter) {
      if (copy.count(instruction) == 0) {
        return Internal("the update of weights {} reads %{}, another weight's value",
                        fmt::join(weights, ", "), instruction->name());
      }
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(copy.at(operand));
    std::vector<ir::Computation*> callees;
    for (const ir::Computation* callee : instruction->called_computations()) {
      ir::Computation* reducer = b.module_builder().CopyScalarReducer(*callee);
      if (reducer == nullptr) {
        return Unimplemented("the update program's %{} calls %{}, which is not a scalar reducer",
                             instruction->name(), callee->name());
      }
      callees.push_back(reducer);
    }
    copy[instruction] =
        b.AddInstruction(instruction->opcode(), std::move(operands), instruction->attributes(),
                         std::move(callees), instruction->shape());
  }
  ALPA_RETURN_IF_ERROR(b.status());

  EmittedUpdate update;
  for (int64_t i : weights) {
    update.weights.push_back(copy.at(results[static_cast<size_t>(i)]));
    std::vector<Instruction*>& next = update.states.emplace_back();
    for (int64_t j : program.weight_states[static_cast<size_t>(i)]) {
      next.push_back(copy.at(results[static_cast<size_t>(n + j)]));
    }
  }
  for (int64_t j : program.shared_states) {
    update.shared.push_back(copy.at(results[static_cast<size_t>(n + j)]));
  }
  return update;
}

}  // namespace alpa::autodiff
