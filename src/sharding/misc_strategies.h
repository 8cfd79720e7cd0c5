// Strategies of the ops no other family covers (reference/alpa.md 2.a.4, the last rows):
//
//   sort, topk      follow an operand (ChooseOperandToFollow for sort's keys and values); the
//                   sorted dim (topk: the last) must be unsplit and partial sums are summed first,
//                   so the needed spec drops both and the edge pays for them; every result leaf
//                   takes the needed spec (Alpa charged the same resharding inside the node).
//   custom-call     an identity (ir/known_custom_calls.h: the layer boundary marker among
//                   them) follows its operand, partial axes included; an elementwise one
//                   (PyTorch/XLA-Neuron's GELU) follows it with partial sums summed first. Any
//                   other target is unknown: with StrategyOptions::replicate_unknown_ops it runs as
//                   a replicated unit, else it is an error naming the op, its target and its source
//                   location.
//   while, conditional, call
//                   a replicated unit: one strategy, every operand and result leaf replicated,
//                   the whole cost on every device. Their bodies are not sharded (Alpa refused
//                   them; a batch-split strategy would need the body's rules).
//   collectives already in the imported HLO (all-reduce, all-gather, reduce-scatter, all-to-all,
//   collective-permute, their async halves, collective-broadcast): a replicated unit. Their
//                   replica groups were chosen for some other partitioning; running them on
//                   replicated data keeps the program's meaning whatever the plan.
//   token ops (after-all, add-dependency, infeed, outfeed, send, recv and their -done halves):
//                   a replicated unit. (rng-get-and-update-state, partition-id and replica-id are
//                   sources: source_strategies.h.)
//
// Tuples and get-tuple-elements are not handled here: a tuple is no decision node, and a
// get-tuple-element follows its operand's selected leaf (strategy_graph.h does both).
#ifndef ALPA_SHARDING_MISC_STRATEGIES_H_
#define ALPA_SHARDING_MISC_STRATEGIES_H_

#include "ir/instruction.h"
#include "ir/opcode.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The opcodes MiscStrategies handles.
bool IsMiscStrategyOpcode(ir::Opcode opcode);

// Requires IsMiscStrategyOpcode(instruction.opcode()). Errors: an unknown custom-call target when
// not allowed; those of the compute cost model.
Result<StrategySet> MiscStrategies(const ir::Instruction& instruction, const StrategyContext& ctx);

// One strategy: every operand and result leaf replicated, the whole cost on every device (also
// the fallback for opcodes without rules when StrategyOptions::replicate_unknown_ops is set).
Result<StrategySet> ReplicatedUnitStrategies(const ir::Instruction& instruction,
                                             const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_MISC_STRATEGIES_H_
