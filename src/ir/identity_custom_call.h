// Custom-calls that return their one operand unchanged (same shape, same values), so every pass
// can treat them as an identity: our layer boundaries (ir/layer_boundary.h) and the
// data-movement markers frameworks leave in dumped modules (PyTorch/XLA on Neuron wraps values
// in AwsNeuronTransferWithStaticRing; JAX's host offloading writes MoveToHost / MoveToDevice).
// JAX's Sharding and SPMD*Shape custom-calls are not listed: they pin or change layouts.
#ifndef ALPA_IR_IDENTITY_CUSTOM_CALL_H_
#define ALPA_IR_IDENTITY_CUSTOM_CALL_H_

#include "ir/instruction.h"

namespace alpa::ir {

bool IsIdentityCustomCall(const Instruction& instruction);

}  // namespace alpa::ir

#endif  // ALPA_IR_IDENTITY_CUSTOM_CALL_H_
