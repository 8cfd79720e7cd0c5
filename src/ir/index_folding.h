// Folding the indices of unrolled loops (loop_unrolling.h): once a loop's iterations are inlined,
// each iteration's counter is arithmetic on constants (JAX's reversed scan reads `N - 1 - i`), and
// each layer reads its weights and the forward's saved values with a dynamic-slice at that index
// from the stacked arrays the loop carried. This pass makes those reads ordinary slices, so the
// planner shards and prices every layer as it would the same model written without a loop:
//
//   get-tuple-element(tuple(v0, ..., vn), index=k)        -> vk
//   op(c1, ..., cm), integer or pred scalar constants     -> constant (add, subtract, multiply,
//                                                            negate, minimum, maximum, clamp,
//                                                            compare, select, convert)
//   dynamic-slice(a, c1, ..., cr), constant starts        -> slice(a), starts clamped to
//                                                            [0, dim - size] as dynamic-slice does
//   slice(dynamic-update-slice(b, u, c1, ..., cr)), stride 1, constant starts:
//       the slice is exactly the update's window          -> u
//       the slice misses the update's window              -> slice(b)
//
// The last rule forwards a value the forward pass stored into a stacked buffer to the backward
// pass that reads it back, so the buffer itself becomes dead. Each instruction keeps its name.
#ifndef ALPA_IR_INDEX_FOLDING_H_
#define ALPA_IR_INDEX_FOLDING_H_

#include <cstdint>

#include "ir/computation.h"

namespace alpa::ir {

// Applies the rules above to `computation` in one pass over its post order (each rule sees its
// operands already folded) and removes what is left dead.
void FoldUnrolledIndices(Computation& computation);

}  // namespace alpa::ir

#endif  // ALPA_IR_INDEX_FOLDING_H_
