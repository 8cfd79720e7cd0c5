// Lowering one resharding (a value laid out by spec A read in spec B) into local ops and the
// collectives sharding::PlanReshard prices, in its order (resharding.h):
//   1. R -> S   slice: dynamic-slice of the tile at
//                 offset_d = IndexOverAxes(device, entering axes) * (local extent / their size)
//   2. P -> S   reduce-scatter along the dimension the axes enter
//   3. P -> R   all-reduce (add)
//   4. S -> S   all-to-all: the axes leave dimension a and enter dimension b (a != b):
//                 reshape b into [G, n_b / G], move G just before a, all-to-all on G
//                 (block k to member k, received blocks stacked in member order), merge G into a
//   5. S -> R   all-gather along the dimension the axes leave
//   6. R -> P   keep the value on the devices at coordinate 0 along the axes, zeros elsewhere
//      S -> P   the tile put into zeros of the unsplit extent at its offset (dynamic-update-slice)
// Entering axes are appended to their dimension's list (minor) and leaving axes must be its
// minor-most ones. Where these steps cannot reach B's order (sharding::ReshardsDirectly says no:
// a permutation of tiles among devices), the gather-and-slice route runs instead, as PlanReshard
// prices it: all-reduce of every pending sum that ends, one all-gather of every leaving axis
// (always the minor end of its dimension), then step 1's slice of every entering axis in B's
// order, then step 6. Axes of size 1 are dropped from both specs first: they cut nothing.
// The emitted collectives are checked against PlanReshard's steps (kind, axes, bytes); uneven
// splits are refused with Unimplemented naming the value.
#ifndef ALPA_SPMD_RESHARD_H_
#define ALPA_SPMD_RESHARD_H_

#include <string>

#include "ir/instruction.h"
#include "sharding/sharding_spec.h"
#include "spmd/spmd_builder.h"
#include "support/status.h"

namespace alpa::spmd {

// `value` is the local tile of an array of shape `global` laid out by `from`; returns its tile
// laid out by `to`. `what` names the edge in errors ("operand 0 of %dot.3").
Result<ir::Instruction*> EmitReshard(SpmdBuilder& s, ir::Instruction* value,
                                     const sharding::ShardingSpec& from,
                                     const sharding::ShardingSpec& to, const ir::Shape& global,
                                     const std::string& what);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_RESHARD_H_
