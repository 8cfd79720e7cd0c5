#include "runtime/instruction_list.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/broadcast_folding.h"
#include "ir/loop_fusion.h"
#include "ir/opcode.h"

namespace alpa::runtime {

Result<InstructionList> CompileInstructionList(const ir::Module& module, KernelChoice kernels) {
  const ir::Computation* computation = module.entry();
  if (computation == nullptr) {
    return InvalidArgument("module {} has no entry computation", module.name());
  }
  if (computation->root() == nullptr) {
    return InvalidArgument("computation {} has no ROOT instruction", computation->name());
  }
  InstructionList list;
  list.computation = computation;
  const std::vector<ir::Instruction*> order = computation->MakePostOrder();
  std::unordered_map<const ir::Instruction*, int32_t> slot_of;
  for (const ir::Instruction* instruction : order) {
    slot_of.emplace(instruction, static_cast<int32_t>(slot_of.size()));
  }
  list.slot_count = static_cast<int32_t>(order.size());
  list.root_slot = slot_of.at(computation->root());
  const std::vector<ir::Instruction*> parameters = computation->parameters();
  std::vector<bool> is_parameter(order.size(), false);
  for (const ir::Instruction* parameter : parameters) {
    if (parameter == nullptr) {
      return InvalidArgument("computation {} skips a parameter number", computation->name());
    }
    list.parameter_slots.push_back(slot_of.at(parameter));
    is_parameter[static_cast<size_t>(slot_of.at(parameter))] = true;
  }

  const bool fast = kernels == KernelChoice::kFast;
  using Values = std::unordered_set<const ir::Instruction*>;
  const Values read_in_place = fast ? ir::BroadcastsReadInPlace(*computation) : Values{};
  const Values fused = fast ? ir::LoopFusedValues(*computation) : Values{};
  for (const ir::Instruction* instruction : order) {
    if (instruction->opcode() == ir::Opcode::kParameter || read_in_place.contains(instruction) ||
        fused.contains(instruction)) {
      continue;
    }
    InstructionStep step;
    step.instruction = instruction;
    step.result = slot_of.at(instruction);
    step.collective = ir::IsCollective(instruction->opcode());
    if (fast && RunsAsLoop(*instruction, fused, read_in_place)) {
      FusedLoop loop = BuildFusedLoop(*instruction, fused, read_in_place);
      for (const ir::Instruction* input : loop.inputs) step.operands.push_back(slot_of.at(input));
      step.loop = std::make_shared<const FusedLoop>(std::move(loop));
      list.steps.push_back(std::move(step));
      continue;
    }
    for (const ir::Instruction* operand : instruction->operands()) {
      step.operands.push_back(slot_of.at(operand));
    }
    if (fast) step.fast_kernel = SelectFastKernel(*instruction);
    list.steps.push_back(std::move(step));
  }
  // The last reader of each slot; a slot nobody reads is freed after its own step, and the slot
  // of a broadcast read in place is never written.
  std::vector<int32_t> last_reader(order.size(), -1);
  for (size_t t = 0; t < list.steps.size(); ++t) {
    const InstructionStep& step = list.steps[t];
    last_reader[static_cast<size_t>(step.result)] = static_cast<int32_t>(t);
    for (int32_t operand : step.operands) {
      last_reader[static_cast<size_t>(operand)] = static_cast<int32_t>(t);
    }
  }
  for (int32_t slot = 0; slot < list.slot_count; ++slot) {
    const int32_t reader = last_reader[static_cast<size_t>(slot)];
    if (slot == list.root_slot || reader < 0) continue;
    InstructionStep& step = list.steps[static_cast<size_t>(reader)];
    (is_parameter[static_cast<size_t>(slot)] ? step.release_if_donated : step.release)
        .push_back(slot);
  }
  for (InstructionStep& step : list.steps) {
    const ir::Opcode opcode = step.instruction->opcode();
    if (opcode != ir::Opcode::kTuple && opcode != ir::Opcode::kGetTupleElement) continue;
    std::vector<int32_t> operands = step.operands;
    std::sort(operands.begin(), operands.end());
    const bool distinct = std::adjacent_find(operands.begin(), operands.end()) == operands.end();
    step.moves_operands =
        distinct && std::all_of(operands.begin(), operands.end(), [&](int32_t s) {
          return std::find(step.release.begin(), step.release.end(), s) != step.release.end();
        });
  }
  return list;
}

}  // namespace alpa::runtime
