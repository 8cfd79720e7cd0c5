// Internal to the interpreter: calling the small scalar computations that reduce, reduce-window,
// select-and-scatter, scatter, sort and map apply per element.
//
// Calling a computation through the evaluator costs a few literal allocations per element, so the
// common shapes are recognised and run as typed loops instead:
//   reducers  `ROOT r = op(p0, p1)` (op in add, multiply, maximum, minimum, and, or, xor) and
//             `ROOT r = p1` (scatter's overwrite)
//   comparators `ROOT c = compare(p0, p1), direction=LT|GT|LE|GE` without a comparison type
//             override (sort's and select-and-scatter's usual comparator)
// Everything else goes through CallScalars, which is exact but slower.
#ifndef ALPA_INTERP_COMPUTATION_CALL_H_
#define ALPA_INTERP_COMPUTATION_CALL_H_

#include <optional>
#include <vector>

#include "interp/ops.h"
#include "interp/scalar_ops.h"
#include "ir/attributes.h"
#include "ir/computation.h"

namespace alpa::interp::internal {

enum class ReducerKind { kGeneral, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor, kSecond };

// Returns the second argument: scatter's "replace the old value with the update".
struct SecondOp {
  template <typename T>
  static constexpr bool kSupports = true;
  template <typename T>
  static T Apply(T, T b) {
    return b;
  }
};

// The kind of a two-parameter scalar computation over `dtype`; kGeneral when not recognised.
ReducerKind MatchReducer(const ir::Computation& computation, ir::DType dtype);

// The direction of `ROOT compare(p0, p1)` over `dtype` scalars, if the computation is exactly that.
std::optional<ir::ComparisonDirection> MatchComparator(const ir::Computation& computation,
                                                       ir::DType dtype);

// Calls fn(Op{}) with the functor of a recognised reducer kind (not kGeneral).
template <typename Fn>
auto VisitReducer(ReducerKind kind, Fn&& fn) {
  switch (kind) {
    case ReducerKind::kMultiply: return fn(MultiplyOp{});
    case ReducerKind::kMaximum: return fn(MaximumOp{});
    case ReducerKind::kMinimum: return fn(MinimumOp{});
    case ReducerKind::kAnd: return fn(AndOp{});
    case ReducerKind::kOr: return fn(OrOp{});
    case ReducerKind::kXor: return fn(XorOp{});
    case ReducerKind::kSecond: return fn(SecondOp{});
    default: return fn(AddOp{});
  }
}

// Evaluates `computation` on scalar arguments and returns its result leaves (one per tuple
// element of the root, or the root itself).
Result<std::vector<ir::Literal>> CallScalars(const ir::Computation& computation,
                                             std::vector<ir::Literal> arguments,
                                             EvalContext& context);

// Checks that `instruction` has `count` called computations.
Status ExpectCalledComputations(const ir::Instruction& instruction, size_t count);

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_COMPUTATION_CALL_H_
