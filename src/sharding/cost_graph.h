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
// A solver node has one live interval, a group many; the group's usage is held over the hull of
// its members' intervals at the group's own peak:
//   usage_g[j] = max over t of sum over members m live at t of memory_m[j]
// an upper bound on what the group occupies at any time, so a request that fits its limit is a
// plan that fits (the plan's exact peak is recomputed afterwards from the liveness of the
// chosen shardings).
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
  // The solver node deciding each graph node (followers share their root leader's).
  std::vector<int64_t> solver_node_of;
};

inline constexpr double kPicosecondsPerSecond = 1e12;
// round(seconds * 1e12), kForbiddenCost for infinite, NaN or out-of-range times.
int64_t ToSolverCost(double seconds);

// Merges followers and builds the request. Solver nodes appear in the order of their root
// leaders in `graph.nodes`; edges in the order of their first contributing graph edge; edges
// that cost nothing for every pair are dropped. Aborts on a broken graph (a follower with a
// different strategy count, a follow cycle, an edge of the wrong size): generators guarantee it.
ReducedProblem ReduceCostGraph(const CostGraph& graph, const std::string& name,
                               std::optional<int64_t> usage_limit);

// The strategy of every graph node from the solver's choice per solver node.
std::vector<int64_t> ExpandChoice(const ReducedProblem& problem,
                                  const std::vector<int64_t>& solver_choice);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_COST_GRAPH_H_
