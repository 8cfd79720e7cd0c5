// Reverse-mode automatic differentiation of a scalar loss (JAX's grad, on the IR).
//
//   Result<std::unique_ptr<ir::Module>> g = autodiff::Grad(loss_module, {0, 1});
//   // entry of *g: same parameters as loss_module's; returns (loss, dloss/dp0, dloss/dp1)
//
// The forward instructions are copied, then cotangents flow from the loss back to the requested
// parameters through the VJP rule of each instruction on the way (vjp.h); a value used several
// times sums the cotangents of its uses. Only instructions that depend on a requested parameter
// and feed the loss need a rule.
#ifndef ALPA_AUTODIFF_GRAD_H_
#define ALPA_AUTODIFF_GRAD_H_

#include <memory>
#include <vector>

#include "ir/builder.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::autodiff {

// `forward`'s entry must return a scalar float (the loss); `wrt` lists parameter numbers of
// floating type, each once. Errors name the instruction that has no gradient rule, or the bad
// parameter. Called computations may only be scalar reducers (add, maximum, ...).
Result<std::unique_ptr<ir::Module>> Grad(const ir::Module& forward,
                                         const std::vector<int64_t>& wrt);

struct GradOptions {
  // The cotangent the backward pass starts from, dseed/dloss: a loss scale for f16 training.
  double seed = 1.0;
  // Rematerialisation at layer granularity: the backward pass of each pipeline layer
  // (ir/layer_boundary.h) but the last recomputes the layer's forward instructions from the
  // values that enter it, so that only the values crossing layer boundaries stay alive between
  // the forward and the backward pass. The last layer (the loss) is not recomputed: its backward
  // pass starts right after its forward pass, so recomputing it would save nothing. A loss
  // without boundaries is one layer, and remat changes nothing.
  bool remat = false;
};

// The same, emitted into `b` for builders of larger programs (a train step): `entry` is copied
// onto `arguments` (one instruction per parameter, in parameter order) and the result is
// {loss, dseed/d parameter wrt[0], ...}. Forward layer boundaries get backward twins on their
// cotangents (ir/layer_boundary.h).
Result<std::vector<ir::Instruction*>> EmitLossAndGradients(
    const ir::Computation& entry, const std::vector<ir::Instruction*>& arguments,
    const std::vector<int64_t>& wrt, ir::ComputationBuilder& b, const GradOptions& options = {});

}  // namespace alpa::autodiff

#endif  // ALPA_AUTODIFF_GRAD_H_
