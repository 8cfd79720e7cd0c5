// Helpers shared by the strategy generators (one file per op family): the per-device cost terms of
// a strategy, the enumeration of the ways to split tensor dimensions over mesh axes, and the
// pieces of strategy names.
//
// Cost terms (strategy.h):
//   compute    = EstimateInstruction(full instruction).seconds / parallelism
//   collective = the pricer's time of one collective over a set of mesh axes
//   memory     = sum over result leaves of prod(ShardDims(spec, leaf)) * element bytes
//
// Split enumeration: every assignment of mesh axes to tensor dimensions in which
//   - each mesh axis of size > 1 splits at most one dimension (axes of size 1 never split: they
//     hold one copy, and splitting over them would only repeat a layout under another name);
//   - a dimension may take several axes; they are listed ascending (major axis first, as the
//     row-major flattening of those axes: S01, never S10), so a 2-D mesh gets Alpa's 1-D splits
//     S0/S1, its 2-D splits S0,S1 / S1,S0 and its flattened-mesh splits S01;
//   - no dimension is cut into more tiles than it has elements, and, unless allowed, every split
//     dimension is divisible by its tile count (Alpa's default: no padded tiles).
#ifndef ALPA_SHARDING_STRATEGY_UTIL_H_
#define ALPA_SHARDING_STRATEGY_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cost/collective_cost.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "sharding/sharding_spec.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// The mesh axes splitting each of a list of dimensions (ascending per dimension).
using DimAxes = std::vector<std::vector<int64_t>>;

// Tile counts always divide their dimension: the SPMD partitioner lowers even splits alone
// (spmd/literal_split.h), so a padded split would be a plan that cannot run.
struct DimSplitOptions {
  // Keep only assignments to which no unused axis can be added on any dimension (every axis that
  // can still split something does): for compute ops, whose work an unused axis would repeat.
  bool maximal_only = false;
  // Groups of dimension indices of which at most one may be split (a dot's contracting
  // dimensions: one contracting-split axis group at most).
  std::vector<std::vector<int64_t>> exclusive_groups = {};
};

// Every assignment of mesh axes to dimensions of sizes `dim_sizes` under the rules above, except
// the one that splits nothing. Deterministic order: axis 0 takes dimension 0, 1, ..., then none;
// within that, axis 1 likewise; and so on (the most-split assignments come first).
std::vector<DimAxes> EnumerateDimSplits(const std::vector<int64_t>& dim_sizes,
                                        const std::vector<int64_t>& mesh_shape,
                                        const DimSplitOptions& options = {});

// Product of the sizes of `axes` (1 for none).
int64_t AxesSize(const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& axes);
// Product of the sizes of the axes splitting some dimension of `spec` (partial axes excluded).
int64_t SplitAxesSize(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape);

// The non-tuple leaves of `shape` in ir::Shape's leaf order (an array is its own single leaf).
std::vector<const ir::Shape*> ShapeLeaves(const ir::Shape& shape);
// One fully replicated spec per leaf of `shape`.
LeafSpecs ReplicatedLeaves(const ir::Shape& shape);

// Bytes of the tile one device holds of the array `leaf` under `spec`.
int64_t TileBytes(const ShardingSpec& spec, const ir::Shape& leaf,
                  const std::vector<int64_t>& mesh_shape);
// Sum of TileBytes over the leaves of `shape` (specs in leaf order).
int64_t LeafBytes(const LeafSpecs& specs, const ir::Shape& shape,
                  const std::vector<int64_t>& mesh_shape);

// Roofline seconds of the whole instruction on one device of the context; a strategy's compute
// time is this divided by its parallelism. The kernel's launch is not in it: a kernel is launched
// once however it is sharded, and GenerateStrategies adds that to every strategy of the node.
Result<double> InstructionSeconds(const ir::Instruction& instruction, const StrategyContext& ctx);

// One collective the instruction runs over `axes` (ascending), priced by the context's pricer.
// Adds it to `strategy` (collectives and communication_seconds). No axes: nothing to do.
void AddCollective(Strategy& strategy, const StrategyContext& ctx, cost::CollectiveKind kind,
                   std::vector<int64_t> axes, int64_t bytes);

// Whether more than one instruction reads `instruction`'s result (true when the context cannot
// say). A sum read by one user is reduced on that one edge whichever way; only several users make
// reducing it once, in the op, a different choice.
bool HasSeveralUsers(const ir::Instruction& instruction, const StrategyContext& ctx);

// The reduce-scatter variants of `summed`, a strategy of `instruction` whose array output is a
// sum over the mesh axes `cut` (ascending) that it has not reduced yet (no collective for it in
// `summed`): for each output dimension d whose extent the cut axes can split further (divisible
// by its tile count times their size), `summed` with its output split over `cut` at d (after d's
// own axes), named "... (reducescatter @ <cut> to dim d)", paying
//   RS(TileBytes(summed output), cut)        (the input of the reduce-scatter: the whole tile)
// and holding the smaller tile. Where a sum has several users needing it split, one
// reduce-scatter here replaces a resharding on each of their edges (Alpa's
// prefer_reduce_scatter, as a choice of the solver).
std::vector<Strategy> ReduceScatterVariants(const Strategy& summed,
                                            const ir::Instruction& instruction,
                                            const std::vector<int64_t>& cut,
                                            const StrategyContext& ctx);

// The layout of `instruction`'s local op's result under `strategy`, before the strategy's own
// collectives: what the partitioned program holds in the instruction's name, and what a pipeline
// sums a gradient in before its update synchronises it. Undoes them from the last:
//   all-reduce over A:      A becomes partial again;
//   reduce-scatter over A:  A leaves the dimension it splits (its minor-most axes) for partial.
// `scatter_dims`, where given, gets per collective the dimension a reduce-scatter splits (-1
// otherwise). Errors: collectives on a tuple-shaped result, a reduce-scatter over axes that split
// no dimension, a collective the partitioner cannot emit.
Result<LeafSpecs> LayoutBeforeCollectives(const ir::Instruction& instruction,
                                          const Strategy& strategy,
                                          std::vector<int64_t>* scatter_dims = nullptr);

// "{0,1}" for axes 0 and 1; the axes of one dimension are written together: "{01,2}".
std::string AxisGroupsString(const DimAxes& groups);
// "1" for one axis, "{0,1}" for several (Alpa's "allreduce @ 1").
std::string AxesString(const std::vector<int64_t>& axes);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_STRATEGY_UTIL_H_
