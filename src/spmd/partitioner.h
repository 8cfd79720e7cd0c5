// The SPMD partitioner: a sharded computation -> the program every device of the mesh runs
// (XLA's SpmdPartitioner, as a free function over plain data).
//
//   Result<ShardingSolution> plan = sharding::AutoShard(*module->entry(), cluster, mesh, options);
//   Result<std::unique_ptr<ir::Module>> program =
//       spmd::PartitionComputation(*module->entry(), *plan, mesh.shape);
//
// Input: the computation, the chosen strategy of each of its strategy-graph nodes
// (ShardingSolution), the logical mesh shape (device id = row-major position on the mesh).
// Output: a module whose entry has the computation's parameters and result with LOCAL shapes
// (each dimension divided by the product of its axes' sizes) and, in post order, for each
// instruction:
//   1. each operand resharded from its producer's layout to the one the strategy requires, with
//      the collectives sharding::PlanReshard prices (reshard.h);
//   2. the local op (handlers.h, one file per op family);
//   3. the strategy's own collectives (a dot's all-reduce over the axes splitting its contracting
//      dimensions, a reduce's over its reduced dimensions' axes, a reduce-scatter variant's).
// So the program's collectives are exactly those of ShardingEstimate::communication: count and
// bytes (collective_stats.h) are compared in the tests. Result leaves can be asked for in given
// layouts (the next step reads an updated weight in its parameter's layout: the carried edges
// the estimate prices). Instruction names are kept; the ops added are named by the builder.
//
// Errors: an instruction without a handler (Unimplemented naming it and its opcode), an uneven
// split, a resharding whose tile order needs a permutation (reshard.h), a solution that is not
// for this computation.
#ifndef ALPA_SPMD_PARTITIONER_H_
#define ALPA_SPMD_PARTITIONER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/module.h"
#include "sharding/auto_sharding.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::spmd {

struct PartitionOptions {
  // Leaf index of the computation's result (ir::Shape leaf order) -> the layout that leaf must be
  // returned in; other leaves keep their producer's layout.
  std::map<int64_t, sharding::ShardingSpec> result_specs;
};

Result<std::unique_ptr<ir::Module>> PartitionComputation(const ir::Computation& computation,
                                                         const sharding::ShardingSolution& solution,
                                                         const std::vector<int64_t>& mesh_shape,
                                                         const PartitionOptions& options = {});

// The result leaf that carries each parameter's value to the next step
// (AutoShardingOptions::next_values: parameter name -> the instruction computing its next value),
// by parameter name: the first leaf holding the next value. Errors: a name that is not a
// parameter or instruction, a next value that is not in the result.
Result<std::map<std::string, int64_t>> NextValueLeaves(
    const ir::Computation& computation, const sharding::ShardingSolution& solution,
    const std::map<std::string, std::string>& next_values);

// The result layouts that hand each carried value on in its parameter's layout: the leaf of
// NextValueLeaves gets the parameter's chosen layout. Errors: NextValueLeaves'.
Result<std::map<int64_t, sharding::ShardingSpec>> NextValueResultSpecs(
    const ir::Computation& computation, const sharding::ShardingSolution& solution,
    const std::map<std::string, std::string>& next_values);

// The layout of each result leaf of the partitioned program (leaf order): the producer's chosen
// layout, or the one `options` asked for.
std::vector<sharding::ShardingSpec> ResultSpecs(const ir::Computation& computation,
                                                const sharding::ShardingSolution& solution,
                                                const PartitionOptions& options = {});

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_PARTITIONER_H_
