// The strategy generator of every opcode: which op family's rules (one file per family) give an
// instruction its strategies.
//
//   family (file)                    opcodes
//   dot_strategies                   dot
//   convolution_strategies           convolution
//   reduce_strategies                reduce, reduce-window, select-and-scatter
//   gather_scatter_strategies        gather, scatter
//   source_strategies                parameter, constant, iota, rng, rng-bit-generator, ...
//   elementwise_strategies           unary, binary and ternary elementwise ops, map
//   shape_strategies                 transpose, reverse, broadcast, reshape, bitcast, copy
//   slice_strategies                 slice, pad, concatenate, dynamic-slice, dynamic-update-slice
//   misc_strategies                  sort, custom-call, while, conditional, call, collectives, ...
// An opcode no family handles is an Unimplemented error naming it, unless
// StrategyOptions::replicate_unknown_ops lets it run replicated as one unit.
#ifndef ALPA_SHARDING_STRATEGY_DISPATCH_H_
#define ALPA_SHARDING_STRATEGY_DISPATCH_H_

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

Result<StrategySet> DispatchStrategies(const ir::Instruction& instruction,
                                       const StrategyContext& context);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_STRATEGY_DISPATCH_H_
