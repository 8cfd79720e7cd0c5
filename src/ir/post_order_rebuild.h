// Rebuilding a computation's instruction list in its post order, for passes that replace
// instructions as they go (call_inlining.h, index_folding.h): each instruction, its operands and
// control predecessors already pointed at what replaced theirs, is handed to the pass, which adds
// it (or what stands in its stead) to the computation and returns the value that stands for it
// from then on.
#ifndef ALPA_IR_POST_ORDER_REBUILD_H_
#define ALPA_IR_POST_ORDER_REBUILD_H_

#include <functional>
#include <memory>

#include "ir/computation.h"

namespace alpa::ir {

// `place` takes each instruction in post order (Computation::MakePostOrder) and returns its
// replacement: an instruction it added to `computation`, the instruction itself added back, or a
// value placed before. The root becomes its replacement.
void RebuildInPostOrder(Computation& computation,
                        const std::function<Instruction*(std::unique_ptr<Instruction>)>& place);

}  // namespace alpa::ir

#endif  // ALPA_IR_POST_ORDER_REBUILD_H_
