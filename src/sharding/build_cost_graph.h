// From the strategies of a computation to its cost graph (cost_graph.h): the pass-side half of
// the auto-sharding problem, the IR-free half being ReduceCostGraph.
//
//   node v:  seconds[j] = compute_seconds + communication_seconds of strategy j
//            memory[j]  = memory_bytes of strategy j, live over the instruction's buffer interval
//            follows    = the node producing the operand the set follows
//   edge (u, v) per operand leaf of v produced by u:
//            seconds[i][j] = time to reshard u's output i (that leaf) into the layout v's
//                            strategy j needs it in (resharding.h)
//   carried edge (n, p) per value the next step reads in place of parameter p (a weight's update
//   n, when the step runs in a training loop):
//            seconds[i][j] = time to reshard n's output i into p's layout j; without it the
//                            solver could read a weight whole and hand its update back split,
//                            leaving the next step's gather unpaid (Alpa forbids any
//                            difference, its alias constraint; this prices it instead)
//   whole value (a leaf whose value leaves the program whole: a pipeline stage's sent values):
//            seconds[j] += on its node, the time to sum strategy j's pending sum of it, if any
// The edge from the operand a node follows is only read on its diagonal once the two are merged,
// so only the diagonal is priced. Matrices are memoised by (leaf shape, source layouts, required
// layouts): the repeated layers of a model price each distinct edge once.
#ifndef ALPA_SHARDING_BUILD_COST_GRAPH_H_
#define ALPA_SHARDING_BUILD_COST_GRAPH_H_

#include <map>
#include <string>
#include <vector>

#include "cost/liveness.h"
#include "ir/computation.h"
#include "sharding/cost_graph.h"
#include "sharding/resharding.h"
#include "sharding/strategy_graph.h"
#include "support/status.h"

namespace alpa::sharding {

// A value the next step reads in place of a parameter: both nodes, array results.
struct CarriedValue {
  int64_t next = 0;       // the node computing the value
  int64_t parameter = 0;  // the parameter's node
};

// The carried edges of `next_values` (parameter name -> the next value's instruction name) and
// the leaves of `whole_values` (instruction names) in `graph`, generated from `computation`
// (AutoShardingOptions). Errors name what the computation lacks or what does not match.
Result<std::vector<CarriedValue>> CarriedValues(
    const std::map<std::string, std::string>& next_values, const ir::Computation& computation,
    const StrategyGraph& graph);
Result<std::vector<ValueSource>> WholeValues(const std::vector<std::string>& names,
                                             const ir::Computation& computation,
                                             const StrategyGraph& graph);

// `liveness` must cover the computation `graph` was generated from; `whole` are the leaves of
// the whole values.
CostGraph BuildCostGraph(const StrategyGraph& graph, const cost::Liveness& liveness,
                         const ReshardCostModel& reshard_cost,
                         const std::vector<CarriedValue>& carried = {},
                         const std::vector<ValueSource>& whole = {});

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
