// Inlining `call` instructions (XLA's CallInliner): each call is replaced by a copy of the
// computation it calls, its parameters bound to the call's operands. JAX wraps every jitted
// helper it traces into (jax.nn.relu, a Flax module's __call__ under nn.jit) in a call, and the
// passes after import (autodiff, the planner) work on one flat computation.
#ifndef ALPA_IR_CALL_INLINING_H_
#define ALPA_IR_CALL_INLINING_H_

#include <cstdint>

#include "ir/computation.h"

namespace alpa::ir {

// Inlines every call of `computation`, and the calls inside the copies, in place. The copies are
// named "<call>.<instruction>" (unique, as the call's name is); the called computations stay in
// the module. Returns the number of calls inlined.
int64_t InlineCalls(Computation& computation);

}  // namespace alpa::ir

#endif  // ALPA_IR_CALL_INLINING_H_
