// Which dimension of each value carries the batch, and forcing it onto one mesh axis (Alpa's
// force_batch_dim_to_mesh_dim, reference/alpa.md 1.2 and 2.a.5).
//
// Alpa's data parallelism, ZeRO and its (dp, op) logical meshes all mean "every activation is
// split along its batch dimension over the dp axis". Pinning only the batch inputs does not say
// that: the solver may gather the batch and compute replicated, or move the split to another
// dimension mid-graph, whenever its cost model prices that lower. Forcing filters each strategy
// set so that no such choice exists.
//
// The analysis (AnalyzeBatchDims) starts from seeds: the batch parameters' dimension 0, or, when
// none is given (an imported module has no parameter roles), the output dimension 0 of the first
// dot or convolution in post order (Alpa's seed). It then propagates to a fixpoint, forward from
// operands to results and backward from results to operands, through
//   elementwise ops, slices, pads, concatenations, sort, reverse, copy, windows, layer boundary
//               markers: the same dimension, when its extent is unchanged
//   broadcast   operand dim i <-> result dim dimensions[i]
//   transpose   result dim i <-> operand dim permutation[i]
//   reshape     dim d <-> dim e when the dims before them hold the same number of elements and
//               one of the two extents divides the other (the batch stays the major factor of a
//               merged or split dimension: [B,S,H] -> [B*S,H] maps 0 to 0)
//   dot         a batch dimension <-> its output dimension; a free dimension <-> its output
//               dimension; a contracting dimension has none (the weight gradient x^T.dy)
//   convolution input batch <-> output batch
//   reduce      kept dimensions map, a reduced batch dimension ends the batch
//   gather      a dimension of the indices <-> the output dimension it indexes (the embedding
//               lookup), and the operand's dimensions when the gather keeps them whole
// A value keeps the first dimension it is given. Backward propagation never enters a parameter or
// a constant: their layouts are the caller's (a pin) or the solver's choice. Tuple-shaped values
// have no batch dimension. Deterministic: the passes follow the post order.
#ifndef ALPA_SHARDING_BATCH_DIMS_H_
#define ALPA_SHARDING_BATCH_DIMS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "sharding/strategy.h"

namespace alpa::sharding {

// Instruction -> the dimension of its (array) result that carries the batch.
using BatchDims = std::unordered_map<const ir::Instruction*, int64_t>;

// The analysis above. `batch_parameters` names entry parameters whose dimension 0 is the batch
// (names no parameter has are ignored; scalars are skipped).
BatchDims AnalyzeBatchDims(const ir::Computation& computation,
                           const std::vector<std::string>& batch_parameters);

// The strategies of `set` whose output splits dimension `batch_dim` over exactly mesh axis `axis`
// (Alpa's FilterStrategy): when that axis has size 1 (a (1, op) mesh: no data parallelism), the
// ones that leave the dimension unsplit. Partial axes are free. A set left empty by the filter is
// returned whole (the value cannot carry the split, e.g. an extent the axis does not divide; its
// edges pay the resharding). A follow set that loses strategies stops following its operand (the
// one-to-one correspondence is gone).
StrategySet KeepBatchSplit(StrategySet set, int64_t batch_dim, int64_t axis,
                           const std::vector<int64_t>& mesh_shape);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_BATCH_DIMS_H_
