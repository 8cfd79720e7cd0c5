// Rules of reduce-window: being written.
#include "autodiff/vjp.h"

namespace alpa::autodiff {

Result<std::vector<ir::Instruction*>> WindowVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  return Unimplemented("no gradient rule for {} yet", ir::OpcodeName(in.forward.opcode()));
}

}  // namespace alpa::autodiff
