#include "autodiff/grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "autodiff/vjp.h"
#include "ir/builder.h"
#include "ir/layer_boundary.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

// The copy of `callee` in the new module: only scalar reducers are copied, which is what
// reductions and the model zoo use.
Result<ir::Computation*> CopyCallee(const ir::Computation& callee, const Instruction& caller,
                                    ir::ModuleBuilder& mb) {
  ir::Computation* copy = mb.CopyScalarReducer(callee);
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

// Forward pipeline layers (ir/layer_boundary.h). A forward boundary marker with layer k is in
// layer k, and so is what is computed from layer k's values before the next marker (the highest
// layer among the operands, a marker's output entering layer k + 1). What is computed from
// parameters and constants alone ("leaf-computed": a weight's broadcast, the first layer's work)
// has no layer of its own and joins the lowest layer that uses it. Unused leaf-computed values,
// and everything in a loss without markers, are in no layer.
constexpr int64_t kNoLayer = -1;

struct ForwardLayers {
  std::map<const Instruction*, int64_t> layer;
  std::set<const Instruction*> leaf_computed;
};

ForwardLayers AssignForwardLayers(const std::vector<Instruction*>& order) {
  ForwardLayers layers;
  for (const Instruction* instruction : order) {
    int64_t in = kNoLayer;
    bool leaf_computed = true;
    for (const Instruction* operand : instruction->operands()) {
      const std::optional<ir::LayerBoundary> boundary = ir::AsLayerBoundary(*operand);
      if (boundary.has_value() && !boundary->backward) {
        in = std::max(in, boundary->layer + 1);
        leaf_computed = false;
      } else if (layers.leaf_computed.count(operand) == 0) {
        in = std::max(in, layers.layer.at(operand));
        leaf_computed = false;
      }
    }
    const std::optional<ir::LayerBoundary> boundary = ir::AsLayerBoundary(*instruction);
    if (boundary.has_value() && !boundary->backward) {
      layers.layer[instruction] = boundary->layer;
    } else {
      layers.layer[instruction] = in;
      if (leaf_computed) layers.leaf_computed.insert(instruction);
    }
  }
  // Users come after their operands in `order`: walking it backwards, each leaf-computed value
  // sees its users' final layers.
  std::map<const Instruction*, std::vector<const Instruction*>> users;
  for (const Instruction* instruction : order) {
    for (const Instruction* operand : instruction->operands())
      users[operand].push_back(instruction);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (layers.leaf_computed.count(*it) == 0) continue;
    int64_t lowest = kNoLayer;
    for (const Instruction* user : users[*it]) {
      const int64_t layer = layers.layer.at(user);
      if (layer != kNoLayer && (lowest == kNoLayer || layer < lowest)) lowest = layer;
    }
    layers.layer[*it] = lowest;
  }
  return layers;
}

// The forward values the backward pass reads, recomputed per layer when remat is on (GradOptions):
// for the backward pass of layer l, an instruction of layer l, or a leaf-computed one, is emitted
// again from recomputed operands; values entering the layer (boundary markers' outputs,
// parameters, values of earlier layers) are the forward pass's.
class ForwardValues {
 public:
  ForwardValues(const std::vector<Instruction*>& order,
                const std::map<const Instruction*, Instruction*>& copy, bool remat,
                ir::ComputationBuilder& b)
      : copy_(copy), layers_(AssignForwardLayers(order)), b_(b) {
    int64_t last = kNoLayer;
    for (const auto& [instruction, layer] : layers_.layer) last = std::max(last, layer);
    // The last layer (the loss) is never recomputed: its backward pass follows its forward pass.
    recomputed_layers_ = remat ? last : 0;
  }

  int64_t layer(const Instruction* instruction) const { return layers_.layer.at(instruction); }

  // `instruction`'s value for the backward pass of layer `l`.
  Instruction* Get(const Instruction* instruction, int64_t l) {
    if (l < 0 || l >= recomputed_layers_ || !Recomputable(*instruction, l)) {
      return copy_.at(instruction);
    }
    auto [slot, inserted] = recomputed_[l].emplace(instruction, nullptr);
    if (!inserted) return slot->second;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(Get(operand, l));
    const Instruction* forward = copy_.at(instruction);
    Instruction* again =
        b_.AddInstruction(instruction->opcode(), std::move(operands), instruction->attributes(),
                          forward->called_computations(), forward->shape());
    slot->second = again;  // map iterators survive the insertions of the recursion
    return again;
  }

 private:
  bool Recomputable(const Instruction& instruction, int64_t l) const {
    const ir::Opcode opcode = instruction.opcode();
    if (opcode == ir::Opcode::kParameter || ir::AsLayerBoundary(instruction).has_value()) {
      return false;
    }
    // Random numbers and side effects would differ the second time.
    if (opcode == ir::Opcode::kRng || opcode == ir::Opcode::kRngBitGenerator ||
        instruction.attributes().custom_call_has_side_effect) {
      return false;
    }
    return layers_.layer.at(&instruction) == l || layers_.leaf_computed.count(&instruction) > 0;
  }

  const std::map<const Instruction*, Instruction*>& copy_;
  ForwardLayers layers_;
  ir::ComputationBuilder& b_;
  int64_t recomputed_layers_ = 0;  // layers 0 .. recomputed_layers_ - 1 are recomputed
  std::map<int64_t, std::map<const Instruction*, Instruction*>> recomputed_;
};

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

  // 2. Cotangents, from the loss (dL/dL = seed) back through the active instructions; the VJP
  // rules read forward values from `values`, which recomputes them under remat.
  ForwardValues values(order, copy, options.remat, b);
  std::map<const Instruction*, Instruction*> cotangent;
  const Instruction* loss = entry.root();
  cotangent[loss] = Full(b, copy.at(loss), options.seed);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* instruction = *it;
    auto g = cotangent.find(instruction);
    if (g == cotangent.end() || instruction->opcode() == ir::Opcode::kParameter) continue;
    if (active.count(instruction) == 0) continue;
    const int64_t layer = values.layer(instruction);
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) {
      operands.push_back(values.Get(operand, layer));
    }
    Result<std::vector<Instruction*>> operand_cotangents =
        Vjp({*instruction, operands, values.Get(instruction, layer), g->second}, b);
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
  gradient->RemoveDeadInstructions();
  return mb.Build(gradient);
}

}  // namespace alpa::autodiff
