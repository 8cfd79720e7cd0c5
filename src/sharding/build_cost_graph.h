// From the strategies of a computation to its cost graph (cost_graph.h): the pass-side half of
// the auto-sharding problem, the IR-free half being ReduceCostGraph.
//
//   node v:  seconds[j] = compute_seconds + communication_seconds of strategy j
//            memory[j]  = memory_bytes of strategy j, live over the instruction's buffer interval
//            follows    = the node producing the operand the set follows
//   edge (u, v) per operand leaf of v produced by u:
//            seconds[i][j] = time to reshard u's output i (that leaf) into the layout v's
//                            strategy j needs it in (resharding.h)
// The edge from the operand a node follows is only read on its diagonal once the two are merged,
// so only the diagonal is priced. Matrices are memoised by (leaf shape, source layouts, required
// layouts): the repeated layers of a model price each distinct edge once.
#ifndef ALPA_SHARDING_BUILD_COST_GRAPH_H_
#define ALPA_SHARDING_BUILD_COST_GRAPH_H_

#include "cost/liveness.h"
#include "sharding/cost_graph.h"
#include "sharding/resharding.h"
#include "sharding/strategy_graph.h"

namespace alpa::sharding {

// `liveness` must cover the computation `graph` was generated from.
CostGraph BuildCostGraph(const StrategyGraph& graph, const cost::Liveness& liveness,
                         const ReshardCostModel& reshard_cost);

// The operand leaf shapes of `instruction` in order (operand 0's leaves, then operand 1's...),
// paired with (operand, leaf) indices.
struct OperandLeaf {
  int64_t operand = 0;
  int64_t leaf = 0;
  const ir::Shape* shape = nullptr;
};
std::vector<OperandLeaf> OperandLeaves(const ir::Instruction& instruction);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_BUILD_COST_GRAPH_H_
