// Rules of pad, reverse, dynamic-slice, dynamic-update-slice, gather, scatter, reduce-max/min:
// being written.
#include "autodiff/vjp.h"

namespace alpa::autodiff {

Result<std::vector<ir::Instruction*>> IndexingVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  return Unimplemented("no gradient rule for {} yet", ir::OpcodeName(in.forward.opcode()));
}

}  // namespace alpa::autodiff
