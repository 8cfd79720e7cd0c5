// Strategies of ops that rearrange a tensor without computing (reference/alpa.md 2.a.4):
// transpose, reverse, broadcast, reshape, bitcast and copy. All follow their operand (one strategy
// per operand strategy, follow_util.h) except a broadcast of a small operand, and all are linear,
// so partial sums pass through.
//
//   transpose   result dim i takes operand dim permutation[i]'s axes: [S0,R] -> {1,0} -> [R,S0].
//   reverse     reversed dims must be unsplit (a reversed split dim would move every tile to the
//               mirrored device, which no spec describes); other dims keep their axes.
//   copy        identity.
//   bitcast     identity when the dims are equal, else a reshape (layouts are row-major only).
//   broadcast   follow: operand dim i keeps its axes at result dim dimensions[i], new dims are
//               unsplit: f32[16] [S1] -> f32[8,16] dimensions={1} -> [R,S1].
//               A small operand (rank 0, or its elements times the mesh size <= the result's:
//               replicating it costs no more than one result tile) instead gets every split of
//               the result (strategy_util.h's enumeration) plus [R...], each needing the operand
//               split like the result dims it maps to (Alpa's kBroadcast row for scalars; here
//               also for a bias broadcast over the batch).
//   reshape     dims are grouped into the smallest runs with equal products ([8,16] -> [128]: one
//               group; [8,16,4] -> [128,2,2]: {8,16}->{128} and {4}->{2,2}); size-1 dims are left
//               out (never split). Within a group the operand's axes, major first, tile its
//               flattened extent into contiguous blocks as long as
//                 - each axis divides what is left of its dim, and
//                 - the next dim is reached only through a dim cut into single elements;
//               those axes are then placed on the result dims the same way, in order. The longest
//               prefix of axes that passes both walks is kept; the operand is needed without the
//               others (its edge all-gathers them). Examples on a (2, 4) mesh:
//                 [8,16] [S0,R]  -> [128]   [S0]      major factor of a merge
//                 [8,16] [R,S1]  -> [128]   [R]       needs [R,R]: a minor split is strided
//                 [8,16] [R,S1]  -> [16,8]  [R,R]     needs [R,R]
//                 [8,16] [S0,R]  -> [16,8]  [S0,R]    rows 0-3 of 8 = rows 0-7 of 16
//                 [2,4,16] [S0,S1,R] -> [128]  [S01]  leading dims cut into single elements
//                 [128] [S01]    -> [8,16]  [S01,R]   8 tiles land on the major factor 8
//                 [128] [S01]    -> [4,32]  [S0,R]    needs [S0]: axis 1 would straddle rows
#ifndef ALPA_SHARDING_SHAPE_STRATEGIES_H_
#define ALPA_SHARDING_SHAPE_STRATEGIES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/instruction.h"
#include "ir/opcode.h"
#include "sharding/sharding_spec.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The opcodes ShapeStrategies handles.
bool IsShapeStrategyOpcode(ir::Opcode opcode);

// Requires IsShapeStrategyOpcode(instruction.opcode()). Errors: those of the compute cost model.
Result<StrategySet> ShapeStrategies(const ir::Instruction& instruction, const StrategyContext& ctx);

// The reshape rule above: {the operand's needed spec, the result's spec} for an operand laid out
// as `spec` (partial axes kept).
std::pair<ShardingSpec, ShardingSpec> ReshapeSpecs(const ShardingSpec& spec,
                                                   const std::vector<int64_t>& operand_dims,
                                                   const std::vector<int64_t>& result_dims,
                                                   const std::vector<int64_t>& mesh_shape);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_SHAPE_STRATEGIES_H_
