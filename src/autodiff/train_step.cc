#include "autodiff/train_step.h"

#include <set>

#include "autodiff/grad.h"
#include "ir/builder.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

std::string StateName(const OptimizerConfig& config, int64_t slot) {
  if (config.kind == OptimizerKind::kSgd) return "velocity";
  return slot == 0 ? "m" : "v";
}

Result<ir::DType> CheckWeights(const ir::Computation& entry, const std::vector<int64_t>& weights) {
  const std::vector<Instruction*> parameters = entry.parameters();
  if (weights.empty()) return InvalidArgument("a train step needs at least one weight to train");
  std::optional<ir::DType> dtype;
  for (int64_t number : weights) {
    if (number < 0 || number >= static_cast<int64_t>(parameters.size())) {
      return InvalidArgument("no parameter {} to train ({} has {})", number, entry.name(),
                             parameters.size());
    }
    const ir::Shape& shape = parameters[number]->shape();
    if (dtype.has_value() && shape.IsArray() && shape.dtype() != *dtype) {
      return Unimplemented("weights of several types ({} and {}); mixed precision is not built yet",
                           ir::DTypeName(*dtype), ir::DTypeName(shape.dtype()));
    }
    if (shape.IsArray()) dtype = shape.dtype();
  }
  return *dtype;  // Grad checks that each weight is a float array.
}

}  // namespace

Result<std::unique_ptr<ir::Module>> BuildTrainStep(const ir::Module& loss,
                                                   const std::vector<int64_t>& weights,
                                                   const OptimizerConfig& optimizer) {
  const ir::Computation* entry = loss.entry();
  if (entry == nullptr) return InvalidArgument("module {} has no entry computation", loss.name());
  ALPA_ASSIGN_OR_RETURN(ir::DType dtype, CheckWeights(*entry, weights));
  const std::vector<Instruction*> parameters = entry->parameters();
  const std::set<int64_t> is_weight(weights.begin(), weights.end());

  ir::ModuleBuilder mb(loss.name() + ".train_step");
  ir::ComputationBuilder b = mb.NewComputation("train_step");
  // Parameters in the documented order: weights, their state, the step count, the batch.
  int64_t number = 0;
  std::vector<Instruction*> arguments(parameters.size(), nullptr);
  for (int64_t w : weights) {
    arguments[w] = b.Parameter(number++, parameters[w]->shape(), parameters[w]->name());
  }
  const int64_t slots = StatePerParameter(optimizer);
  std::vector<std::vector<Instruction*>> state(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    const Instruction* weight = parameters[weights[i]];
    for (int64_t slot = 0; slot < slots; ++slot) {
      state[i].push_back(b.Parameter(number++, weight->shape(),
                                     weight->name() + "." + StateName(optimizer, slot)));
    }
  }
  Instruction* step = b.Parameter(number++, ir::Shape::Scalar(dtype), "step");
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (is_weight.count(static_cast<int64_t>(p)) > 0) continue;
    arguments[p] = b.Parameter(number++, parameters[p]->shape(), parameters[p]->name());
  }
  ALPA_RETURN_IF_ERROR(b.status());

  ALPA_ASSIGN_OR_RETURN(std::vector<Instruction*> loss_and_gradients,
                        EmitLossAndGradients(*entry, arguments, weights, b));
  Instruction* next_step = b.Add(step, b.ConstantScalar(dtype, 1));
  std::vector<Instruction*> new_weights, new_state;
  for (size_t i = 0; i < weights.size(); ++i) {
    ParameterUpdate update = EmitParameterUpdate(optimizer, arguments[weights[i]],
                                                 loss_and_gradients[i + 1], state[i], next_step, b);
    new_weights.push_back(update.parameter);
    new_state.insert(new_state.end(), update.state.begin(), update.state.end());
  }
  std::vector<Instruction*> results = {loss_and_gradients[0]};
  results.insert(results.end(), new_weights.begin(), new_weights.end());
  results.insert(results.end(), new_state.begin(), new_state.end());
  results.push_back(next_step);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * train_step, b.Build(b.Tuple(std::move(results))));
  return mb.Build(train_step);
}

}  // namespace alpa::autodiff
