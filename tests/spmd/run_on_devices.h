// Running a partitioned program on 4 in-process devices from whole values, for the partitioner's
// execution tests (partitioned_execution_test.cc, strategy_harness_test.cc).
#ifndef ALPA_TESTS_SPMD_RUN_ON_DEVICES_H_
#define ALPA_TESTS_SPMD_RUN_ON_DEVICES_H_

#include <utility>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/spmd_executor.h"
#include "sharding/auto_sharding.h"
#include "sharding/sharding_spec.h"
#include "spmd/literal_split.h"
#include "support/status.h"

namespace alpa::spmd {

// The whole results of `program` run on 4 in-process devices: the whole `arguments` split in the
// layouts `solution` chose for `step`'s parameters, and each result leaf assembled from its
// tiles in `specs` (one per leaf of the step's root).
inline Result<std::vector<ir::Literal>> RunOnFourDevices(
    const ir::Module& program, const ir::Computation& step,
    const sharding::ShardingSolution& solution, const std::vector<ir::Literal>& arguments,
    const std::vector<int64_t>& mesh, const std::vector<sharding::ShardingSpec>& specs) {
  std::vector<std::vector<ir::Literal>> per_device(4);
  for (const ir::Instruction* parameter : step.parameters()) {
    const int64_t node = solution.graph.NodeOf(*parameter);
    ALPA_ASSIGN_OR_RETURN(
        std::vector<ir::Literal> tiles,
        SplitLiteral(arguments[static_cast<size_t>(parameter->attributes().parameter_number)],
                     solution.Chosen(node).output[0], mesh));
    for (size_t d = 0; d < 4; ++d) per_device[d].push_back(std::move(tiles[d]));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> outputs,
                        runtime::RunSpmdProgram(program, std::move(per_device)));
  const ir::Shape& root = step.root()->shape();
  std::vector<ir::Literal> results;
  for (size_t leaf = 0; leaf < specs.size(); ++leaf) {
    std::vector<ir::Literal> tiles;
    for (std::vector<ir::Literal>& device : outputs) tiles.push_back(std::move(device[leaf]));
    ALPA_ASSIGN_OR_RETURN(ir::Literal whole,
                          AssembleLiteral(tiles, specs[leaf], mesh,
                                          root.IsTuple() ? root.tuple_shapes()[leaf] : root));
    results.push_back(std::move(whole));
  }
  return results;
}

}  // namespace alpa::spmd

#endif  // ALPA_TESTS_SPMD_RUN_ON_DEVICES_H_
