// The auto-sharding cost graph and its reduction to the solver's problem (solver/request.h).
//
// One graph node per instruction that makes a sharding decision, with per strategy its cost in
// seconds (compute + the collectives it runs) and its per-device bytes over its live interval;
// one edge per (operand value, user) pair with the resharding time for every pair of strategies.
//
// Followers (reference/alpa.md 2.a.6): a node whose strategies correspond one to one to another
// node's (an elementwise op following its operand) shares that node's decision. Merging a
// follower f into its leader l (through chains, to the root leader):
//   cost_l[j]   += cost_f[j] + edge(l, f)[j][j]      (an edge inside a group only pays its
//   diagonal) edge(x, f)  becomes an edge (x, l) with the same matrix; parallel edges are summed.
// A solver node has one live interval, a group many: the group's node carries the memory of
// its members over their first interval, and each further interval (the usages of the members
// live over it summed) a node of its own tied to the group's, zero costs and an edge forbidden
// off its diagonal, so that it takes the group's strategy. The request's memory is then exactly
// the liveness's for every choice:
//   usage(t) = sum over graph nodes m live at t of memory_m[s(root(m))]
// (the solvers contract such ties back into one node, solver/heuristic_reduce.h, or give them one
// column per allowed pair, solver/milp_model.h). Holding the group's peak over the hull of its
// members' intervals instead made the solver see 1.72 GiB as the least a batch-1 Llama step on 4
// H100s needs, whose fastest plan peaks at 1.54 GiB (docs/cost-model.md).
//
// Times become integer picoseconds for the solver (1e-12 s: a 1 ns kernel is 1000 units and the
// int64 range still holds 9e6 s). An infinite or NaN time is a forbidden choice (kForbiddenCost).
#ifndef ALPA_SHARDING_COST_GRAPH_H_
#define ALPA_SHARDING_COST_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "solver/request.h"

namespace alpa::sharding {

struct CostGraphNode {
  std::vector<double> seconds;        // per strategy
  std::vector<int64_t> memory_bytes;  // per strategy, per device
  solver::Interval live;
  int64_t follows = -1;  // the node whose decision this one shares (same strategy count), or -1
};

struct CostGraphEdge {
  int64_t from = 0;             // the operand's node
  int64_t to = 0;               // the user's node
  std::vector<double> seconds;  // row-major |S(from)| x |S(to)|
};

struct CostGraph {
  std::vector<CostGraphNode> nodes;
  std::vector<CostGraphEdge> edges;
};

struct ReducedProblem {
  solver::Request request;
  // The solver node deciding each graph node (followers share their root leader's); the nodes
  // after the groups' only carry memory.
  std::vector<int64_t> solver_node_of;
};

inline constexpr double kPicosecondsPerSecond = 1e12;
// round(seconds * 1e12), kForbiddenCost for infinite, NaN or out-of-range times.
int64_t ToSolverCost(double seconds);

// Merges followers and builds the request. Solver nodes appear in the order of their root
// leaders in `graph.nodes`, then the nodes carrying groups' further memory; edges in the order of
// their first contributing graph edge, then the ties; edges that cost nothing for every pair are
// dropped. Aborts on a broken graph (a follower with a
// different strategy count, a follow cycle, an edge of the wrong size): generators guarantee it.
ReducedProblem ReduceCostGraph(const CostGraph& graph, const std::string& name,
                               std::optional<int64_t> usage_limit);

// The strategy of every graph node from the solver's choice per solver node.
std::vector<int64_t> ExpandChoice(const ReducedProblem& problem,
                                  const std::vector<int64_t>& solver_choice);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_COST_GRAPH_H_
