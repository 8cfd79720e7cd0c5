// Rules of convolution: being written.
#include "autodiff/vjp.h"

namespace alpa::autodiff {

Result<std::vector<ir::Instruction*>> ConvolutionVjp(const VjpInputs& in,
                                                     ir::ComputationBuilder& b) {
  return Unimplemented("no gradient rule for {} yet", ir::OpcodeName(in.forward.opcode()));
}

}  // namespace alpa::autodiff
