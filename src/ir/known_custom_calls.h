// Custom-calls every pass may look through, by what they compute:
//   identities   return their one operand unchanged (same shape, same values): our layer
//                boundaries (ir/layer_boundary.h) and the data-movement markers frameworks leave
//                in dumped modules (PyTorch/XLA on Neuron wraps values in
//                AwsNeuronTransferWithStaticRing; JAX's host offloading writes MoveToHost /
//                MoveToDevice);
//   elementwise  a function of each element of their one operand, of its shape: PyTorch/XLA-
//                Neuron's GELU and its derivative (AwsNeuronGelu, AwsNeuronGeluApprxTanh,
//                AwsNeuronGeluBackward; the interpreter evaluates them, interp/custom_call.cc).
// JAX's Sharding and SPMD*Shape custom-calls are in neither: they pin or change layouts.
#ifndef ALPA_IR_KNOWN_CUSTOM_CALLS_H_
#define ALPA_IR_KNOWN_CUSTOM_CALLS_H_

#include <span>
#include <string_view>

#include "ir/instruction.h"

namespace alpa::ir {

bool IsIdentityCustomCall(const Instruction& instruction);
bool IsElementwiseCustomCall(const Instruction& instruction);

// The targets of each kind (the interpreter evaluates them, and names them in its error).
std::span<const std::string_view> IdentityCustomCallTargets();
std::span<const std::string_view> ElementwiseCustomCallTargets();

}  // namespace alpa::ir

#endif  // ALPA_IR_KNOWN_CUSTOM_CALLS_H_
