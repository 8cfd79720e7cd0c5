// Strategies of the ops that start values: parameters, constants, iota, random numbers and the
// device ids. Each strategy is a layout of the result; the op needs nothing from its operands but
// replicated scalars (rng's bounds, rng-bit-generator's state).
//
//   opcode                              strategies (replicated last, as Alpa appends "R")
//   parameter (array)                   every split of its dimensions (EnumerateDimSplits:
//                                       divisible only), then R
//   parameter (tuple, token)            R (every leaf replicated)
//   constant                            R
//   iota                                every split, non-divisible allowed (as Alpa), then R
//   rng                                 every split (divisible), then R
//   rng-bit-generator, rng-get-and-     R (the state is one sequence; splitting it would change
//   update-state                        the numbers drawn)
//   partition-id, replica-id            R
//
// On a (2, 4) mesh a [8, 16] parameter has 8 split strategies, in EnumerateDimSplits order
// [S01,R] [S0,S1] [S0,R] [S1,S0] [R,S01] [R,S0] [S1,R] [R,S1], then [R,R]. Names are the specs
// (ToString; "R" for a tuple).
//
// Costs: compute = full / (product of the splitting axes) (0 for a parameter or a constant);
// memory = the tile. Replicating is not penalised here as Alpa does (its compute costs are 0):
// the memory term and the users' resharding price it.
//
// Forcing the batch dimension is not applied: nothing here tells whether a parameter carries the
// batch (Alpa knows it from its batch-dimension analysis). A data parameter gets its batch split
// through the dot or convolution reading it, whose strategies are forced (dot_strategies.h), and
// the resharding its edge would otherwise pay.
#ifndef ALPA_SHARDING_SOURCE_STRATEGIES_H_
#define ALPA_SHARDING_SOURCE_STRATEGIES_H_

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// parameter, constant, iota, rng, rng-bit-generator, rng-get-and-update-state, partition-id,
// replica-id. Errors: any other opcode.
Result<StrategySet> SourceStrategies(const ir::Instruction& instruction,
                                     const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_SOURCE_STRATEGIES_H_
