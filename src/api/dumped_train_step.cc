#include "api/dumped_train_step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_set>
#include <vector>

#include "hlo/input_output_alias.h"

namespace alpa::api {
namespace {

using cost::ParameterRole;

// The values the forward pass reads: those whose value reaches a dot, a convolution or a result
// the step does not carry over (the loss, logits), found in one pass against the post order (a
// value reaches what its readers reach). Optimizer state reaches neither, only the state the step
// updates.
std::unordered_set<const ir::Instruction*> ReadByTheForwardPass(
    const ir::Computation& entry, const std::vector<const ir::Instruction*>& results) {
  std::unordered_set<const ir::Instruction*> reaching(results.begin(), results.end());
  const std::vector<ir::Instruction*> order = entry.MakePostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Instruction& instruction = **it;
    if (instruction.opcode() == ir::Opcode::kDot ||
        instruction.opcode() == ir::Opcode::kConvolution) {
      reaching.insert(&instruction);
    }
    if (!reaching.contains(&instruction)) continue;
    reaching.insert(instruction.operands().begin(), instruction.operands().end());
  }
  return reaching;
}

Status NotCarried(const ir::Module& step, const std::string& why) {
  return InvalidArgument(
      "{}: {}, so its weights and optimizer state are not known and the data, zero2 and zero3 "
      "methods cannot place them; dump the train step with its state donated (JAX: "
      "jax.jit(step, donate_argnums=0); PyTorch/XLA aliases it itself), or plan with --method "
      "shard",
      step.name(), why);
}

}  // namespace

Result<TrainStep> DescribeDumpedTrainStep(const ir::Module& step) {
  const ir::Computation& entry = *step.entry();
  ALPA_ASSIGN_OR_RETURN(const std::vector<hlo::InputOutputAlias> aliases,
                        hlo::InputOutputAliases(step));
  if (aliases.empty()) return NotCarried(step, "the module has no input_output_alias");
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  const ir::Instruction& root = *entry.root();
  std::map<int64_t, int64_t> output_of;  // parameter number -> root element
  for (const hlo::InputOutputAlias& alias : aliases) {
    if (alias.output_index.size() != 1 || !alias.parameter_index.empty()) {
      return InvalidArgument(
          "{}: input_output_alias {{{}}}: ({}, {{{}}}) aliases inside a tuple; only array "
          "parameters aliased by elements of the root tuple are read",
          step.name(), fmt::join(alias.output_index, ","), alias.parameter,
          fmt::join(alias.parameter_index, ","));
    }
    if (alias.parameter >= static_cast<int64_t>(parameters.size()) ||
        root.opcode() != ir::Opcode::kTuple || alias.output_index[0] >= root.operand_count()) {
      return InvalidArgument("{}: input_output_alias {{{}}}: ({}, {{}}) names no {}", step.name(),
                             alias.output_index[0], alias.parameter,
                             alias.parameter >= static_cast<int64_t>(parameters.size())
                                 ? "parameter of the entry"
                                 : "element of the root tuple");
    }
    output_of[alias.parameter] = alias.output_index[0];
  }

  // The results not carried over to the next step.
  std::vector<const ir::Instruction*> results;
  for (int64_t k = 0; k < root.operand_count(); ++k) {
    const bool carried = std::ranges::any_of(
        output_of,
        [k](const std::pair<const int64_t, int64_t>& alias) { return alias.second == k; });
    if (!carried) results.push_back(root.operand(k));
  }
  const std::unordered_set<const ir::Instruction*> forward = ReadByTheForwardPass(entry, results);
  std::vector<ParameterRole> roles(parameters.size(), ParameterRole::kOther);
  std::vector<int64_t> next_element(parameters.size(), -1);
  std::vector<const ir::Instruction*> batch;
  bool carries_weights = false;
  for (const ir::Instruction* parameter : parameters) {
    if (parameter == nullptr) continue;
    const int64_t number = parameter->attributes().parameter_number;
    const size_t i = static_cast<size_t>(number);
    const bool is_array = parameter->shape().IsArray() && parameter->shape().rank() > 0;
    const auto aliased = output_of.find(number);
    const bool passed_through =
        aliased != output_of.end() && root.operand(aliased->second) == parameter;
    if (aliased == output_of.end() || passed_through) {
      if (is_array) {
        roles[i] = ParameterRole::kBatch;
        batch.push_back(parameter);
      }
      continue;
    }
    next_element[i] = aliased->second;
    const bool weight = forward.contains(parameter);
    roles[i] = weight ? ParameterRole::kWeight : ParameterRole::kOptimizerState;
    carries_weights = carries_weights || weight;
  }
  if (!carries_weights) {
    return NotCarried(step,
                      "no parameter it updates in place is read by a dot, a convolution or a "
                      "result it does not carry over (the loss), as a whole train step's weights "
                      "are (an optimizer-only graph updates state without a forward pass)");
  }
  // The batch's leading dimension is the one most inputs share (ties: the larger); an input
  // with another (position ids [1, S] beside token ids [B, S]) is read whole by every device.
  std::map<int64_t, int64_t> inputs_of_size;
  for (const ir::Instruction* input : batch) ++inputs_of_size[input->shape().dims()[0]];
  int64_t batch_size = 0;
  for (const auto& [size, inputs] : inputs_of_size) {
    if (batch_size == 0 || inputs >= inputs_of_size.at(batch_size)) batch_size = size;
  }
  for (const ir::Instruction* input : batch) {
    if (input->shape().dims()[0] != batch_size) {
      roles[static_cast<size_t>(input->attributes().parameter_number)] = ParameterRole::kOther;
    }
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<sharding::MethodParameter> described,
                        sharding::StepParameters(entry, roles, next_element));
  return TrainStep{&step, std::move(described)};
}

Result<TrainStep> DescribeDumpedStepFor(const ir::Module& step, sharding::ParallelMethod method) {
  ALPA_ASSIGN_OR_RETURN(const std::vector<hlo::InputOutputAlias> aliases,
                        hlo::InputOutputAliases(step));
  if (aliases.empty() && method == sharding::ParallelMethod::kShard) return TrainStep{&step, {}};
  return DescribeDumpedTrainStep(step);
}

}  // namespace alpa::api
