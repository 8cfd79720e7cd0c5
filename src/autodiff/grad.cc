#include "autodiff/grad.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "autodiff/vjp.h"
#include "ir/builder.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

// The copy of `callee` in the new module: only scalar reducers `(a, b) -> op(a, b)` are copied
// (by ModuleBuilder::ScalarReducer), which is what reductions and the model zoo use.
Result<ir::Computation*> CopyCallee(const ir::Computation& callee, const Instruction& caller,
                                    ir::ModuleBuilder& mb) {
  const Instruction* root = callee.root();
  const bool scalar_reducer = callee.parameter_count() == 2 && root != nullptr &&
                              ir::IsElementwiseBinary(root->opcode()) &&
                              root->operand(0)->opcode() == ir::Opcode::kParameter &&
                              root->operand(1)->opcode() == ir::Opcode::kParameter;
  ir::Computation* copy =
      scalar_reducer ? mb.ScalarReducer(root->opcode(), root->shape().dtype()) : nullptr;
  if (copy == nullptr) {
    return Unimplemented(
        "%{} ({}) calls %{}, which is not a scalar reducer; autodiff copies only "
        "those",
        caller.name(), ir::OpcodeName(caller.opcode()), callee.name());
  }
  return copy;
}

Status CheckArguments(const ir::Computation& entry, const std::vector<int64_t>& wrt) {
  const Instruction* root = entry.root();
  if (!root->shape().IsArray() || root->shape().rank() != 0 ||
      !ir::IsFloating(root->shape().dtype())) {
    return InvalidArgument("the loss %{} must be a scalar float, not {}", root->name(),
                           root->shape().ToString(false));
  }
  const std::vector<Instruction*> parameters = entry.parameters();
  std::set<int64_t> seen;
  for (int64_t number : wrt) {
    if (number < 0 || number >= static_cast<int64_t>(parameters.size())) {
      return InvalidArgument("no parameter {} to differentiate with respect to ({} has {})", number,
                             entry.name(), parameters.size());
    }
    if (!seen.insert(number).second) {
      return InvalidArgument("parameter {} is listed twice", number);
    }
    const ir::Shape& shape = parameters[number]->shape();
    if (!shape.IsArray() || !ir::IsFloating(shape.dtype())) {
      return InvalidArgument("parameter {} (%{}) is {}, not a float array: it has no gradient",
                             number, parameters[number]->name(), shape.ToString(false));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Instruction*>> EmitLossAndGradients(const ir::Computation& entry,
                                                       const std::vector<Instruction*>& arguments,
                                                       const std::vector<int64_t>& wrt,
                                                       ir::ComputationBuilder& b,
                                                       const GradOptions& options) {
  if (entry.root() == nullptr) {
    return InvalidArgument("computation {} has no root to differentiate", entry.name());
  }
  ALPA_RETURN_IF_ERROR(CheckArguments(entry, wrt));
  const std::vector<Instruction*> parameters = entry.parameters();
  if (arguments.size() != parameters.size()) {
    return InvalidArgument("{} takes {} parameters but got {} arguments", entry.name(),
                           parameters.size(), arguments.size());
  }

  // 1. The forward pass, copied onto `arguments`. `active` marks the float values that depend
  // on a requested parameter: only they carry cotangents (a compare's pred or an index does not).
  std::map<const Instruction*, Instruction*> copy;
  std::set<const Instruction*> active;
  for (size_t i = 0; i < parameters.size(); ++i) copy[parameters[i]] = arguments[i];
  for (int64_t number : wrt) active.insert(parameters[number]);
  const std::vector<Instruction*> order = entry.MakePostOrder();
  for (const Instruction* instruction : order) {
    if (instruction->opcode() == ir::Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    bool depends = false;
    for (const Instruction* operand : instruction->operands()) {
      operands.push_back(copy.at(operand));
      depends = depends || active.count(operand) > 0;
    }
    const ir::Shape& shape = instruction->shape();
    if (depends && shape.IsArray() && ir::IsFloating(shape.dtype())) active.insert(instruction);
    std::vector<ir::Computation*> callees;
    for (const ir::Computation* callee : instruction->called_computations()) {
      ALPA_ASSIGN_OR_RETURN(ir::Computation * callee_copy,
                            CopyCallee(*callee, *instruction, b.module_builder()));
      callees.push_back(callee_copy);
    }
    copy[instruction] = b.AddInstruction(instruction->opcode(), std::move(operands),
                                         instruction->attributes(), std::move(callees), shape);
  }
  ALPA_RETURN_IF_ERROR(b.status());

  // 2. Cotangents, from the loss (dL/dL = 1) back through the active instructions.
  std::map<const Instruction*, Instruction*> cotangent;
  const Instruction* loss = entry.root();
  cotangent[loss] = Full(b, copy.at(loss), options.seed);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* instruction = *it;
    auto g = cotangent.find(instruction);
    if (g == cotangent.end() || instruction->opcode() == ir::Opcode::kParameter) continue;
    if (active.count(instruction) == 0) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(copy.at(operand));
    Result<std::vector<Instruction*>> operand_cotangents =
        Vjp({*instruction, operands, copy.at(instruction), g->second}, b);
    if (!operand_cotangents.ok()) {
      return operand_cotangents.status().WithContext(
          fmt::format("cannot differentiate %{} ({}), which lies between a parameter and the loss",
                      instruction->name(), ir::OpcodeName(instruction->opcode())));
    }
    for (size_t i = 0; i < operands.size(); ++i) {
      const Instruction* operand = instruction->operand(static_cast<int64_t>(i));
      if (active.count(operand) == 0) continue;
      Instruction* contribution = (*operand_cotangents)[i];
      if (contribution == nullptr) {
        return InvalidArgument("%{} ({}) has no gradient with respect to its operand {} (%{})",
                               instruction->name(), ir::OpcodeName(instruction->opcode()), i,
                               operand->name());
      }
      auto [slot, inserted] = cotangent.emplace(operand, contribution);
      if (!inserted) slot->second = b.Add(slot->second, contribution);
    }
    ALPA_RETURN_IF_ERROR(b.status().WithContext(fmt::format(
        "gradient of %{} ({})", instruction->name(), ir::OpcodeName(instruction->opcode()))));
  }

  // 3. (loss, gradients in the order asked); a parameter the loss does not use gets zeros.
  std::vector<Instruction*> results = {copy.at(loss)};
  for (int64_t number : wrt) {
    const Instruction* parameter = parameters[number];
    auto g = cotangent.find(parameter);
    results.push_back(g != cotangent.end() ? g->second : Full(b, copy.at(parameter), 0));
  }
  return results;
}

Result<std::unique_ptr<ir::Module>> Grad(const ir::Module& forward,
                                         const std::vector<int64_t>& wrt) {
  const ir::Computation* entry = forward.entry();
  if (entry == nullptr) {
    return InvalidArgument("module {} has no entry computation to differentiate", forward.name());
  }
  ir::ModuleBuilder mb(forward.name() + ".grad");
  ir::ComputationBuilder b = mb.NewComputation(entry->name() + ".grad");
  std::vector<Instruction*> arguments;
  for (const Instruction* parameter : entry->parameters()) {
    arguments.push_back(b.Parameter(parameter->attributes().parameter_number, parameter->shape(),
                                    parameter->name()));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<Instruction*> results,
                        EmitLossAndGradients(*entry, arguments, wrt, b));
  ALPA_ASSIGN_OR_RETURN(ir::Computation * gradient, b.Build(b.Tuple(std::move(results))));
  return mb.Build(gradient);
}

}  // namespace alpa::autodiff
