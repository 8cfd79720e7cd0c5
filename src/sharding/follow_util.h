// Helpers of the generators whose strategies "follow" an operand (elementwise, shape, slice and
// misc families, reference/alpa.md 2.a.4): which operand to follow, spec edits, and the cost terms
// of a data-movement strategy.
//
// A follow set has one strategy per strategy of the followed operand (same order), so the cost
// graph can merge the two decisions (reference/alpa.md 2.a.6). A rule maps the operand's spec to
// the layout it is needed in (which may drop splits or partial axes the op cannot keep: the edge
// then pays the all-gather or all-reduce) and to the result's layout.
#ifndef ALPA_SHARDING_FOLLOW_UTIL_H_
#define ALPA_SHARDING_FOLLOW_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/instruction.h"
#include "sharding/sharding_spec.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The operand to follow among `candidates` (operand indices, not empty). Alpa ranks operands by
// their most-split strategy plus a depth bonus (ChooseOperandToFollow, reference/alpa.md 2.a.5);
// without a depth map the rank is, most important first:
//   1. the most tiles one of the operand's strategies cuts it into (partial axes do not count);
//   2. not a broadcast, constant or iota (Alpa's depth -5 for broadcasts: add(x, broadcast(b))
//      follows the activation x, not the bias);
//   3. more strategies (more choices for the merged decision);
//   4. the lower operand index.
// Deterministic: depends only on the operands' strategy sets and opcodes.
int64_t ChooseOperandToFollow(const ir::Instruction& instruction, const StrategyContext& ctx,
                              const std::vector<int64_t>& candidates);

ShardingSpec WithoutPartial(ShardingSpec spec);
// `spec` with dimensions `dims` unsplit (their axes replicate).
ShardingSpec UnsplitDims(ShardingSpec spec, const std::vector<int64_t>& dims);

// The layouts one strategy of a follow set needs and produces.
struct FollowLayout {
  std::vector<LeafSpecs> operands;  // one per operand of the instruction
  LeafSpecs output;                 // one per result leaf
};
// From the followed operand's spec (its strategy's output) to the layouts.
using FollowRule = std::function<FollowLayout(const ShardingSpec& followed)>;

// The follow set of `instruction` on operand `followed`: strategy i from strategy i of the
// operand, named "<result specs> <- %operand <its spec>" ("[S0,R] <- %x [S0,R] P1"), with the
// cost terms of SetDataMovementCosts. Every spec is checked against the mesh and its tensor (a
// failure is a bug of the rule: abort).
Result<StrategySet> FollowOperand(const ir::Instruction& instruction, const StrategyContext& ctx,
                                  int64_t followed, const FollowRule& rule);

// Cost terms of a strategy of an elementwise or data-movement op, whose work is proportional to
// the tile a device writes:
//   compute_seconds = seconds(whole instruction) / SplitAxesSize(output leaf 0)
//   memory_bytes    = LeafBytes(output)
// Partial axes do not divide the work (each device writes a whole tile of partial sums).
void SetDataMovementCosts(Strategy& strategy, const ir::Instruction& instruction,
                          double instruction_seconds, const std::vector<int64_t>& mesh_shape);

// Aborts unless every spec of `strategy` passes CheckSpec for its tensor (a generator's bug).
void CheckStrategySpecs(const Strategy& strategy, const ir::Instruction& instruction,
                        const std::vector<int64_t>& mesh_shape);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_FOLLOW_UTIL_H_
