// The auto-sharding problem as plain data, and the solver's answer.
//
// A `Request` is exactly the problem of the IOPDDL contest (shared/iopddl/README.md, the public
// form of Alpa's and XLA's auto-sharding ILP): choose one strategy s(v) per node v minimising
//
//   cost(s) = sum_v node.costs[s(v)] + sum_(u,v) edge.costs[s(u) * |S(v)| + s(v)]
//
// subject to the memory limit: at every time t,
//
//   sum over nodes v with start(v) <= t < end(v) of usages[s(v)]  <=  usage_limit.
//
// The solver never sees the IR: the sharding layer turns a computation into a Request (strategies
// of each operator, resharding costs on the edges, per-device bytes and live intervals), and reads
// the Answer back. Contest instances are therefore the solver's benchmark.
//
// Costs and usages are non-negative integers. A cost of kForbiddenCost or more marks a choice that
// must never be taken (the contest's instances encode forbidden strategies as 1e18): a solution
// using one is not feasible, whatever the memory. Sums of such entries pass 2^63, so totals are
// 128-bit.
#ifndef ALPA_SOLVER_REQUEST_H_
#define ALPA_SOLVER_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace alpa::solver {

inline constexpr int64_t kForbiddenCost = 1'000'000'000'000'000'000;

using TotalCost = __int128;  // a sum of costs; print with TotalCostString
std::string TotalCostString(TotalCost cost);

// Half-open [start, end) over the schedule's time steps; empty (end <= start) means the node
// occupies no memory at any time.
struct Interval {
  int64_t start = 0;
  int64_t end = 0;

  bool empty() const { return end <= start; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

struct Node {
  Interval interval;
  std::vector<int64_t> costs;   // per strategy
  std::vector<int64_t> usages;  // per strategy, same length as costs (bytes for our planner)

  int64_t num_strategies() const { return static_cast<int64_t>(costs.size()); }
  friend bool operator==(const Node&, const Node&) = default;
};

struct Edge {
  int64_t from = 0;  // node index u
  int64_t to = 0;    // node index v
  // Row-major |S(u)| x |S(v)|: costs[i * |S(v)| + j] is paid when s(u) = i and s(v) = j.
  std::vector<int64_t> costs;

  friend bool operator==(const Edge&, const Edge&) = default;
};

struct Request {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::optional<int64_t> usage_limit;  // absent: unlimited

  friend bool operator==(const Request&, const Request&) = default;
};

// Checks the shape of a request: every node has at least one strategy and as many usages as
// costs, edges name existing distinct nodes and carry |S(u)| * |S(v)| costs, nothing is negative.
// The message names the place ("node 17: 3 costs but 2 usages").
Status ValidateRequest(const Request& request);

enum class SolveStatus {
  kOptimal,     // proven optimal (cost == lower_bound)
  kFeasible,    // a feasible solution, optimality not proven (time or effort limit)
  kInfeasible,  // proven: no choice meets the memory limit without a forbidden strategy
  kNoSolution,  // the limit passed before any feasible solution was found; nothing is proven
};
std::string_view SolveStatusName(SolveStatus status);  // "optimal", "feasible", ...

struct Answer {
  SolveStatus status = SolveStatus::kNoSolution;
  // One strategy index per node; empty unless status is kOptimal or kFeasible. A solver never
  // returns a choice it knows to be forbidden or over the memory limit.
  std::vector<int64_t> choice;
  TotalCost cost = 0;                    // cost(choice)
  std::optional<TotalCost> lower_bound;  // a proven bound on the optimum, when the solver has one
  double seconds = 0;                    // wall time spent
  std::string solver;                    // "cbc", "heuristic", ...

  // True when `choice` is a solution (it is empty, yet a solution, for a problem of no nodes).
  bool has_solution() const {
    return status == SolveStatus::kOptimal || status == SolveStatus::kFeasible;
  }
  // A solution proven within `relative_gap` of the optimum by its lower bound (WithinGap below);
  // every kOptimal answer is, its bound being its cost.
  bool ProvenWithin(double relative_gap) const;
};

// Whether a solution of `cost` is proven within `relative_gap` of the optimum by `bound`:
// cost - bound <= relative_gap * |cost| (with 0, only a bound that meets the cost proves it).
bool WithinGap(TotalCost cost, std::optional<TotalCost> bound, double relative_gap);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_REQUEST_H_
