// The IR verifier: the structural and shape rules every module must satisfy before a pass,
// the interpreter or the planner may rely on it (XLA's HloVerifier).
#ifndef ALPA_IR_VERIFIER_H_
#define ALPA_IR_VERIFIER_H_

#include "ir/computation.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::ir {

// Checks one computation and returns the first broken rule as "PLACE: computation %c: <rule>"
// (the rule names the instruction). PLACE is FILE:LINE:COLUMN of the offending instruction when
// the module was parsed from text (Instruction::location, Module::source_file), else the file,
// else absent:
//   - it has a root, owned by it;
//   - parameter numbers are exactly 0..n-1, once each;
//   - operands and control predecessors are present and belong to it; called computations are
//     present;
//   - the instruction graph (operands and control edges) has no cycle;
//   - every array shape has non-negative dimensions;
//   - every instruction satisfies its opcode's shape rule (InferShape: operand counts, attribute
//     ranges, called computations' signatures) and its declared shape is Compatible() with the
//     inferred one. Opcodes without a rule (custom-call, ...) keep their declared shape.
Status VerifyComputation(const Computation& computation);

// Checks a module: an entry exists and is one of its computations; computation names are unique
// in the module, instruction names in their computation; called computations belong to it and
// the call graph has no cycle; then VerifyComputation on each computation in module order.
// Returns the first broken rule, as "FILE: module m: <rule>" for the module-wide ones.
Status VerifyModule(const Module& module);

}  // namespace alpa::ir

#endif  // ALPA_IR_VERIFIER_H_
