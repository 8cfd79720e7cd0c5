// Elementwise ops (unary, binary, compare, select, clamp, convert): every operand is read in the
// result's layout (the strategy follows one operand), so the op is the same op on the tiles. A
// partial result stays partial: only linear ops keep one (the strategy generator's rule).
#include "spmd/handlers.h"

namespace alpa::spmd {

Result<ir::Instruction*> HandleElementwise(SpmdBuilder& s, const OpInput& input) {
  return EmitLocal(s, input);
}

}  // namespace alpa::spmd
