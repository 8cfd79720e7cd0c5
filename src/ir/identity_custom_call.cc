#include "ir/identity_custom_call.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "ir/layer_boundary.h"

namespace alpa::ir {

bool IsIdentityCustomCall(const Instruction& instruction) {
  static constexpr std::string_view kMarkers[] = {"AwsNeuronTransferWithStaticRing", "MoveToHost",
                                                  "MoveToDevice"};
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  if (AsLayerBoundary(instruction).has_value()) return true;
  const std::string_view target = instruction.attributes().custom_call_target;
  return instruction.operand_count() == 1 &&
         instruction.operand(0)->shape().Compatible(instruction.shape()) &&
         std::find(std::begin(kMarkers), std::end(kMarkers), target) != std::end(kMarkers);
}

}  // namespace alpa::ir
