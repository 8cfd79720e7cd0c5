// Tuples and markers. Tuple instructions and get-tuple-elements of them are views (not strategy
// nodes) and are rebuilt by the driver; a get-tuple-element of a node (a variadic reduce, a
// while) selects the local element; the pipeline's layer-boundary marker is an identity and
// stays one on the tile, so the partitioned program keeps its layers.
#include "ir/known_custom_calls.h"
#include "spmd/handlers.h"

namespace alpa::spmd {

Result<ir::Instruction*> HandleTupleAndMarkers(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  if (original.opcode() == ir::Opcode::kGetTupleElement) return EmitLocal(s, input);
  if (ir::IsIdentityCustomCall(original) || ir::IsElementwiseCustomCall(original)) {
    return EmitLocal(s, input);
  }
  return Unimplemented("%{} ({}{}): the SPMD partitioner has no handler for it yet",
                       original.name(), ir::OpcodeName(original.opcode()),
                       original.opcode() == ir::Opcode::kCustomCall
                           ? " \"" + original.attributes().custom_call_target + "\""
                           : std::string());
}

}  // namespace alpa::spmd
