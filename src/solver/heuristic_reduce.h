// Exact reductions of a Request for the heuristic solver: the result has the same optimum, with
// fewer, larger nodes, and every local choice maps back to a choice of the Request.
//
// A reduced node stands for a group of the Request's nodes whose strategies are all fixed by the
// group's strategy r (member x takes strategy[r] of its map). It carries the sum of their costs
// and one memory item (compressed time range, usage per r) per member with an interval.
//
// Passes, repeated until none changes anything:
// - Prune: drop a strategy whose cost is forbidden or that has no finite entry against any
//   strategy of some neighbour (arc consistency). A node left with nothing proves infeasibility.
// - Fold: a single-strategy node adds its edges' rows to its neighbours' costs and loses them.
// - Contract: an edge on which each strategy r of x allows exactly one strategy pi(r) of y (a
//   function, e.g. "y must be sharded like x": forbidden off the diagonal) merges y into x. The
//   contest's instances are half made of such edges, which otherwise pin nodes together so that
//   no small move can change them.
// - Leaf: a node of degree one without memory items takes, for each strategy r of its neighbour,
//   its best answer pi(r) = argmin_t cost(t) + edge(r, t), and is contracted likewise.
//
// Costs here are saturating: kInf marks a forbidden entry and sums involving it.
#ifndef ALPA_SOLVER_HEURISTIC_REDUCE_H_
#define ALPA_SOLVER_HEURISTIC_REDUCE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "solver/request.h"

namespace alpa::solver {

inline constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

struct MemoryItem {
  int32_t lo = 0, hi = 0;      // compressed time points [lo, hi)
  std::vector<int64_t> usage;  // per strategy of the owning node
};

struct Member {
  int32_t node = 0;               // the Request's node
  std::vector<int32_t> strategy;  // its strategy per strategy of the owning node
};

struct ReducedNode {
  bool alive = true;
  std::vector<int64_t> cost;  // per strategy
  std::vector<MemoryItem> items;
  std::vector<Member> members;  // members[0]: the node itself, mapped one to one
  std::vector<int32_t> edges;   // incident edge ids; dead ones are skipped and dropped lazily

  int32_t k() const { return static_cast<int32_t>(cost.size()); }
};

struct ReducedEdge {
  bool alive = true;
  int32_t a = 0, b = 0;
  std::vector<int64_t> cost;  // row-major k(a) x k(b)
};

struct ReducedGraph {
  std::vector<ReducedNode> nodes;
  std::vector<ReducedEdge> edges;
  // Time points: the distinct interval starts of the Request (usage can only rise at one).
  int32_t num_times = 0;
  bool has_limit = false;
  int64_t limit = 0;
  bool infeasible = false;  // proven
};

// Builds and reduces; `graph.infeasible` is set when a node loses all strategies or the least
// possible usage exceeds the limit at some time point.
ReducedGraph ReduceRequest(const Request& request);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_REDUCE_H_
