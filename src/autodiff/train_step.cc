#include "autodiff/train_step.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "autodiff/grad.h"
#include "autodiff/vjp.h"
#include "ir/builder.h"
#include "ir/value_tag.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

// The weights' dtype in the loss: one float type for all of them.
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
      return InvalidArgument(
          "weights of several types ({} and {}); a train step needs one type for all weights",
          ir::DTypeName(*dtype), ir::DTypeName(shape.dtype()));
    }
    if (shape.IsArray()) dtype = shape.dtype();
  }
  if (!dtype.has_value()) return InvalidArgument("the weights to train are not arrays");
  return *dtype;  // Grad checks that each weight is a float array.
}

ir::Shape WithType(const ir::Shape& shape, ir::DType dtype) {
  return ir::Shape::Array(dtype, shape.dims());
}

Status CheckMicroBatches(const std::vector<Instruction*>& parameters,
                         const std::set<int64_t>& is_weight, int64_t num_micro_batches) {
  if (num_micro_batches < 1) {
    return InvalidArgument("num_micro_batches is {}; it must be at least 1", num_micro_batches);
  }
  if (num_micro_batches == 1) return Status::Ok();
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (is_weight.count(static_cast<int64_t>(p)) > 0) continue;
    const ir::Shape& shape = parameters[p]->shape();
    if (!shape.IsArray() || shape.rank() == 0) {
      return InvalidArgument(
          "batch parameter %{} has shape {}: micro-batches stack along dimension 0, so it needs "
          "one",
          parameters[p]->name(), shape.ToString(false));
    }
  }
  return Status::Ok();
}

Status CheckInputGradients(const std::vector<Instruction*>& parameters,
                           const std::set<int64_t>& is_weight,
                           const std::vector<int64_t>& input_gradients, int64_t num_micro_batches) {
  if (input_gradients.empty()) return Status::Ok();
  if (num_micro_batches != 1) {
    return InvalidArgument("input gradients need one micro-batch, not {}", num_micro_batches);
  }
  for (int64_t number : input_gradients) {
    if (number < 0 || number >= static_cast<int64_t>(parameters.size()) ||
        is_weight.count(number) > 0) {
      return InvalidArgument("input gradient {}: not a batch parameter of the loss", number);
    }
  }
  return Status::Ok();
}

// The step's shape of a batch parameter: M micro-batches stacked along dimension 0.
ir::Shape StackedShape(const ir::Shape& micro_batch, int64_t num_micro_batches) {
  std::vector<int64_t> dims = micro_batch.dims();
  if (num_micro_batches > 1) dims[0] *= num_micro_batches;
  return ir::Shape::Array(micro_batch.dtype(), dims);
}

// Micro-batch k of every batch argument: rows [k n / M, (k + 1) n / M) of dimension 0.
std::vector<Instruction*> MicroBatch(const std::vector<Instruction*>& arguments,
                                     const std::set<int64_t>& is_weight, int64_t k,
                                     int64_t num_micro_batches, ir::ComputationBuilder& b) {
  std::vector<Instruction*> micro = arguments;
  if (num_micro_batches == 1) return micro;
  for (size_t p = 0; p < arguments.size(); ++p) {
    if (is_weight.count(static_cast<int64_t>(p)) > 0) continue;
    const ir::Shape& shape = arguments[p]->shape();
    std::vector<ir::SliceDim> slice;
    for (int64_t d = 0; d < shape.rank(); ++d) slice.push_back({0, shape.dim(d), 1});
    const int64_t rows = shape.dim(0) / num_micro_batches;
    slice[0] = {k * rows, (k + 1) * rows, 1};
    micro[p] = b.Slice(arguments[p], std::move(slice));
  }
  return micro;
}

// Tags {loss, gradients...} (ir/value_tag.h) so that analyses of the step's IR can tell the
// forward pass, the backward pass and the gradients apart.
void TagLossAndGradients(const std::vector<Instruction*>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    ir::SetValueTag(*values[i], i == 0 ? ir::ValueTag::kLoss : ir::ValueTag::kGradient);
  }
}

// The update program's weight of the loss's weight i.
int64_t ProgramWeight(const TrainStepOptions& options, size_t i) {
  return options.update_weights.empty() ? static_cast<int64_t>(i) : options.update_weights[i];
}

// One array of a weight's state as the step carries it.
struct CarriedState {
  std::string name;  // after the weight's
  ir::Shape shape;
};

// Each weight's state arrays as the step carries them: OptimizerState's in the master type, or
// the update program's (its weights checked against the loss's).
Result<std::vector<std::vector<CarriedState>>> WeightStates(
    const std::vector<Instruction*>& parameters, const std::vector<int64_t>& weights,
    const TrainStepOptions& options, ir::DType master) {
  const UpdateProgram* update = options.update.get();
  if (update != nullptr && !options.update_weights.empty() &&
      options.update_weights.size() != weights.size()) {
    return InvalidArgument("{} update-program weights for {} weights",
                           options.update_weights.size(), weights.size());
  }
  std::vector<std::vector<CarriedState>> states;
  for (size_t i = 0; i < weights.size(); ++i) {
    const ir::Shape& weight = parameters[static_cast<size_t>(weights[i])]->shape();
    std::vector<CarriedState>& arrays = states.emplace_back();
    if (update == nullptr) {
      for (const StateArray& array : OptimizerState(options.optimizer, weight.dims())) {
        arrays.push_back({array.name, ir::Shape::Array(master, array.dims)});
      }
      continue;
    }
    const int64_t u = ProgramWeight(options, i);
    if (u < 0 || u >= update->num_weights || !(update->weight_shape(u) == weight)) {
      return InvalidArgument("weight {} ({}) is not the update program's weight {}", i,
                             weight.ToString(false), u);
    }
    for (int64_t j : update->weight_states[static_cast<size_t>(u)]) {
      arrays.push_back({fmt::format("state{}", j), update->state_shape(j)});
    }
  }
  return states;
}

// The next values (W'..., state'..., shared'...) from the weights, their gradients, their states
// and the shared states (our optimizer's t, or the update program's).
Result<std::vector<Instruction*>> EmitUpdates(const TrainStepOptions& options,
                                              const std::vector<Instruction*>& weights,
                                              const std::vector<Instruction*>& gradients,
                                              const std::vector<std::vector<Instruction*>>& states,
                                              const std::vector<Instruction*>& shared,
                                              ir::ComputationBuilder& b) {
  std::vector<Instruction*> next_weights, next_states, next_shared;
  if (options.update == nullptr) {
    Instruction* next_step = b.Add(shared[0], b.ConstantScalar(shared[0]->shape().dtype(), 1));
    for (size_t i = 0; i < weights.size(); ++i) {
      ParameterUpdate next =
          EmitParameterUpdate(options.optimizer, weights[i], gradients[i], states[i], next_step, b);
      next_weights.push_back(next.parameter);
      next_states.insert(next_states.end(), next.state.begin(), next.state.end());
    }
    next_shared.push_back(next_step);
  } else {
    std::vector<int64_t> program_weights;
    for (size_t i = 0; i < weights.size(); ++i) {
      program_weights.push_back(ProgramWeight(options, i));
    }
    ALPA_ASSIGN_OR_RETURN(
        EmittedUpdate next,
        EmitProgramUpdate(*options.update, program_weights, weights, gradients, states, shared, b));
    next_weights = std::move(next.weights);
    for (const std::vector<Instruction*>& own : next.states) {
      next_states.insert(next_states.end(), own.begin(), own.end());
    }
    next_shared = std::move(next.shared);
  }
  next_weights.insert(next_weights.end(), next_states.begin(), next_states.end());
  next_weights.insert(next_weights.end(), next_shared.begin(), next_shared.end());
  return next_weights;
}

}  // namespace

ir::DType MasterWeightType(ir::DType weight_type) {
  const bool half = weight_type == ir::DType::kF16 || weight_type == ir::DType::kBF16;
  return half ? ir::DType::kF32 : weight_type;
}

StepStateCounts StateCounts(const ir::Module& loss, const std::vector<int64_t>& weights,
                            const TrainStepOptions& options) {
  const std::vector<Instruction*> parameters = loss.entry()->parameters();
  StepStateCounts counts;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::vector<int64_t>& dims = parameters[static_cast<size_t>(weights[i])]->shape().dims();
    counts.per_weight.push_back(
        options.update == nullptr
            ? static_cast<int64_t>(OptimizerState(options.optimizer, dims).size())
            : static_cast<int64_t>(
                  options.update->weight_states[static_cast<size_t>(ProgramWeight(options, i))]
                      .size()));
  }
  counts.shared =
      options.update == nullptr ? 1 : static_cast<int64_t>(options.update->shared_states.size());
  return counts;
}

std::vector<StepParameter> StepParameterLayout(const ir::Module& loss,
                                               const std::vector<int64_t>& weights,
                                               const TrainStepOptions& options) {
  const std::vector<Instruction*> parameters = loss.entry()->parameters();
  const StepStateCounts counts = StateCounts(loss, weights, options);
  std::vector<StepParameter> layout(weights.size(), StepParameter::kWeight);
  for (int64_t states : counts.per_weight) {
    layout.insert(layout.end(), static_cast<size_t>(states), StepParameter::kOptimizerState);
  }
  layout.insert(layout.end(), static_cast<size_t>(counts.shared), StepParameter::kSharedState);
  layout.insert(layout.end(), parameters.size() - weights.size(), StepParameter::kBatch);
  return layout;
}

std::vector<int64_t> StepNextValueElements(const std::vector<StepParameter>& layout) {
  std::vector<int64_t> elements;
  for (size_t i = 0; i < layout.size(); ++i) {
    elements.push_back(layout[i] == StepParameter::kBatch ? -1 : static_cast<int64_t>(i) + 1);
  }
  return elements;
}

Result<std::unique_ptr<ir::Module>> BuildTrainStep(const ir::Module& loss,
                                                   const std::vector<int64_t>& weights,
                                                   const TrainStepOptions& options,
                                                   const std::vector<int64_t>& input_gradients) {
  const ir::Computation* entry = loss.entry();
  if (entry == nullptr) return InvalidArgument("module {} has no entry computation", loss.name());
  if (!(options.loss_scale > 0)) {
    return InvalidArgument("loss_scale is {}; it must be positive", options.loss_scale);
  }
  const UpdateProgram* update = options.update.get();
  if (update != nullptr && options.loss_scale != 1.0) {
    return InvalidArgument("a loss scale with the user's optimizer: its step scales its own loss");
  }
  const int64_t num_micro_batches = options.num_micro_batches;
  ALPA_ASSIGN_OR_RETURN(const ir::DType compute, CheckWeights(*entry, weights));
  const ir::DType master = update == nullptr ? MasterWeightType(compute) : compute;
  const std::vector<Instruction*> parameters = entry->parameters();
  ALPA_ASSIGN_OR_RETURN(const std::vector<std::vector<CarriedState>> carried_states,
                        WeightStates(parameters, weights, options, master));
  const std::set<int64_t> is_weight(weights.begin(), weights.end());
  ALPA_RETURN_IF_ERROR(CheckMicroBatches(parameters, is_weight, num_micro_batches));
  ALPA_RETURN_IF_ERROR(
      CheckInputGradients(parameters, is_weight, input_gradients, num_micro_batches));
  std::vector<int64_t> wrt = weights;
  wrt.insert(wrt.end(), input_gradients.begin(), input_gradients.end());

  ir::ModuleBuilder mb(loss.name() + ".train_step");
  ir::ComputationBuilder b = mb.NewComputation("train_step");
  // Parameters in the documented order: (master) weights, their state, the shared state (t),
  // the batch. `arguments` are the loss's parameters: weights in the compute type.
  int64_t number = 0;
  std::vector<Instruction*> arguments(parameters.size(), nullptr);
  std::vector<Instruction*> master_weights;
  for (int64_t w : weights) {
    const Instruction* weight = parameters[w];
    Instruction* value = b.Parameter(number++, WithType(weight->shape(), master), weight->name());
    master_weights.push_back(value);
    arguments[w] = compute == master ? value : b.Convert(value, compute);
  }
  std::vector<std::vector<Instruction*>> state(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    for (const CarriedState& array : carried_states[i]) {
      state[i].push_back(
          b.Parameter(number++, array.shape, parameters[weights[i]]->name() + "." + array.name));
    }
  }
  std::vector<Instruction*> shared;
  if (update == nullptr) {
    shared.push_back(b.Parameter(number++, ir::Shape::Scalar(master), "step"));
  } else {
    for (int64_t j : update->shared_states) {
      shared.push_back(b.Parameter(number++, update->state_shape(j), fmt::format("shared{}", j)));
    }
  }
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (is_weight.count(static_cast<int64_t>(p)) > 0) continue;
    const ir::Shape& shape = parameters[p]->shape();
    arguments[p] =
        b.Parameter(number++, shape.IsArray() ? StackedShape(shape, num_micro_batches) : shape,
                    parameters[p]->name());
  }
  ALPA_RETURN_IF_ERROR(b.status());

  // {loss, gradients...} in the master type, summed over the micro-batches and divided by their
  // number times the loss scale.
  const GradOptions grad_options{.seed = options.loss_scale, .remat = options.remat};
  std::vector<Instruction*> loss_and_gradients, input_cotangents;
  for (int64_t k = 0; k < num_micro_batches; ++k) {
    ALPA_ASSIGN_OR_RETURN(
        std::vector<Instruction*> micro,
        EmitLossAndGradients(*entry, MicroBatch(arguments, is_weight, k, num_micro_batches, b), wrt,
                             b, grad_options));
    // Input gradients stay in their own type: they are activations' cotangents, not updates.
    input_cotangents.assign(micro.end() - static_cast<int64_t>(input_gradients.size()),
                            micro.end());
    micro.resize(micro.size() - input_gradients.size());
    for (Instruction*& value : micro) {
      if (value->shape().dtype() != master) value = b.Convert(value, master);
    }
    TagLossAndGradients(micro);
    if (loss_and_gradients.empty()) {
      loss_and_gradients = std::move(micro);
    } else {
      for (size_t i = 0; i < micro.size(); ++i) {
        loss_and_gradients[i] = b.Add(loss_and_gradients[i], micro[i]);
      }
    }
    TagLossAndGradients(loss_and_gradients);
  }
  for (size_t i = 0; i < loss_and_gradients.size(); ++i) {
    const double divisor =
        static_cast<double>(num_micro_batches) * (i == 0 ? 1.0 : options.loss_scale);
    Instruction*& sum = loss_and_gradients[i];
    if (divisor != 1.0) sum = b.Divide(sum, Full(b, sum, divisor));
  }
  TagLossAndGradients(loss_and_gradients);
  std::vector<Instruction*> results = {loss_and_gradients[0]};
  ALPA_ASSIGN_OR_RETURN(
      std::vector<Instruction*> next_values,
      EmitUpdates(options, master_weights,
                  {loss_and_gradients.begin() + 1, loss_and_gradients.end()}, state, shared, b));
  results.insert(results.end(), next_values.begin(), next_values.end());
  for (Instruction* gradient : input_cotangents) {
    Instruction* result = options.loss_scale == 1.0
                              ? gradient
                              : b.Divide(gradient, Full(b, gradient, options.loss_scale));
    // Computed per micro-batch like the backward pass it ends (a parameter passed straight
    // through, or a value already tagged, keeps what it is).
    if (result->opcode() != ir::Opcode::kParameter && !ir::GetValueTag(*result).has_value()) {
      ir::SetValueTag(*result, ir::ValueTag::kInputGradient);
    }
    results.push_back(result);
  }
  ALPA_ASSIGN_OR_RETURN(ir::Computation * train_step, b.Build(b.Tuple(std::move(results))));
  train_step->RemoveDeadInstructions();
  return mb.Build(train_step);
}

std::vector<const ir::Instruction*> UpdateGradients(
    const ir::Computation& step, const std::vector<const ir::Instruction*>& next_values) {
  std::map<const Instruction*, int64_t> position;
  for (const std::unique_ptr<Instruction>& x : step.instructions()) {
    position[x.get()] = static_cast<int64_t>(position.size());
  }
  std::vector<const ir::Instruction*> gradients;
  for (const Instruction* next : next_values) {
    const Instruction* nearest = nullptr;
    std::vector<const Instruction*> stack = {next};
    std::set<const Instruction*> seen;
    while (!stack.empty()) {
      const Instruction* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      if (ir::GetValueTag(*x) == ir::ValueTag::kGradient &&
          (nearest == nullptr || position.at(x) > position.at(nearest))) {
        nearest = x;
      }
      for (const Instruction* operand : x->operands()) stack.push_back(operand);
    }
    gradients.push_back(nearest);
  }
  return gradients;
}

}  // namespace alpa::autodiff
