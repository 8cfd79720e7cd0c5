#include "ir/known_custom_calls.h"

#include <algorithm>
#include <string_view>

#include "ir/layer_boundary.h"

namespace alpa::ir {
namespace {

// "Sharding" is JAX's with_sharding_constraint: the value as it is, its `sharding=` a pin
// (sharding::PinsFromHloShardings).
constexpr std::string_view kIdentityTargets[] = {kLayerBoundaryTarget,
                                                 "AwsNeuronTransferWithStaticRing", "MoveToHost",
                                                 "MoveToDevice", "Sharding"};
constexpr std::string_view kElementwiseTargets[] = {"AwsNeuronGelu", "AwsNeuronGeluApprxTanh",
                                                    "AwsNeuronGeluBackward"};

// A custom-call of one operand of the result's shape, its target among `targets`.
bool IsUnaryCustomCall(const Instruction& instruction, std::span<const std::string_view> targets) {
  if (instruction.opcode() != Opcode::kCustomCall || instruction.operand_count() != 1 ||
      !instruction.operand(0)->shape().Compatible(instruction.shape())) {
    return false;
  }
  const std::string_view target = instruction.attributes().custom_call_target;
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

}  // namespace

bool IsIdentityCustomCall(const Instruction& instruction) {
  // A layer boundary only as its verifier accepts it (a layer, a pass).
  if (instruction.attributes().custom_call_target == kLayerBoundaryTarget) {
    return AsLayerBoundary(instruction).has_value();
  }
  return IsUnaryCustomCall(instruction, kIdentityTargets);
}

bool IsElementwiseCustomCall(const Instruction& instruction) {
  return IsUnaryCustomCall(instruction, kElementwiseTargets);
}

std::span<const std::string_view> IdentityCustomCallTargets() { return kIdentityTargets; }

std::span<const std::string_view> ElementwiseCustomCallTargets() { return kElementwiseTargets; }

}  // namespace alpa::ir
