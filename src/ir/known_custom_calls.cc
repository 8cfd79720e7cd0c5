#include "ir/known_custom_calls.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "ir/layer_boundary.h"

namespace alpa::ir {
namespace {

// A custom-call of one operand of the result's shape, its target among `targets`.
template <size_t N>
bool IsUnaryCustomCall(const Instruction& instruction, const std::string_view (&targets)[N]) {
  if (instruction.opcode() != Opcode::kCustomCall || instruction.operand_count() != 1 ||
      !instruction.operand(0)->shape().Compatible(instruction.shape())) {
    return false;
  }
  const std::string_view target = instruction.attributes().custom_call_target;
  return std::find(std::begin(targets), std::end(targets), target) != std::end(targets);
}

}  // namespace

bool IsIdentityCustomCall(const Instruction& instruction) {
  static constexpr std::string_view kMarkers[] = {"AwsNeuronTransferWithStaticRing", "MoveToHost",
                                                  "MoveToDevice"};
  return AsLayerBoundary(instruction).has_value() || IsUnaryCustomCall(instruction, kMarkers);
}

bool IsElementwiseCustomCall(const Instruction& instruction) {
  static constexpr std::string_view kActivations[] = {"AwsNeuronGelu", "AwsNeuronGeluApprxTanh",
                                                      "AwsNeuronGeluBackward"};
  return IsUnaryCustomCall(instruction, kActivations);
}

}  // namespace alpa::ir
