// Pipeline layer boundaries (Alpa's mark_pipeline_boundary), as an identity custom-call on each
// value that leaves a layer:
//
//   %x.1 = f32[4,8,16] custom-call(%x), custom_call_target="alpa_layer_boundary",
//          frontend_attributes={layer="2",pass="forward"}
//
// A forward marker with layer k says: x is an output of forward layer k, read by later layers.
// Autodiff gives each forward marker a backward twin on the cotangent, with the same k and
// pass="backward": the gradient flowing out of backward layer k + 1 into backward layer k. So
// backward layer k (between backward markers k and k - 1) is tied to forward layer k, and layer
// construction (inter-op planning) can pair them on one pipeline stage. Values, not instructions,
// are marked, so a layer may pass on several values (all marked with the same k).
#ifndef ALPA_IR_LAYER_BOUNDARY_H_
#define ALPA_IR_LAYER_BOUNDARY_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/builder.h"

namespace alpa::ir {

inline constexpr std::string_view kLayerBoundaryTarget = "alpa_layer_boundary";

struct LayerBoundary {
  int64_t layer = 0;
  bool backward = false;
};

// x marked as leaving `boundary.layer` (same shape and value as x).
Instruction* EmitLayerBoundary(ComputationBuilder& b, Instruction* x, LayerBoundary boundary);

// The marker `instruction` is, or nullopt when it is not one (verified markers only: see
// CheckLayerBoundary).
std::optional<LayerBoundary> AsLayerBoundary(const Instruction& instruction);

// For a custom-call with the marker's target: one operand of the result's shape, a layer that is
// a non-negative integer, pass "forward" or "backward". The verifier calls it; the error says
// what is wrong.
Status CheckLayerBoundary(const Instruction& instruction);

}  // namespace alpa::ir

#endif  // ALPA_IR_LAYER_BOUNDARY_H_
