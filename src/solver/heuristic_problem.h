// The heuristic solver's working form of a Request (request.h): the reduced problem of
// heuristic_reduce.h laid out for fast local moves.
//
// Each node is a group of the Request's nodes moving together. Its memory is a list of items
// (a range of compressed time points and a usage per strategy); items whose usage does not depend
// on the strategy are summed into `base_usage` instead, and items over the same range are merged.
//
// Forbidden edge entries stay, clamped to `big`: a cost larger than any sensible solution yet
// small enough that a node's cost plus all its incident entries cannot overflow int64. The search
// avoids them like any high cost, and the solver re-checks its final choice against the Request.
#ifndef ALPA_SOLVER_HEURISTIC_PROBLEM_H_
#define ALPA_SOLVER_HEURISTIC_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "solver/request.h"

namespace alpa::solver {

struct HeuristicProblem {
  int32_t num_nodes = 0;  // reduced nodes
  int64_t big = 0;        // the clamped cost of a forbidden edge entry

  // Strategies, CSR by node: node v's local strategies are strategy_begin[v] ..
  // strategy_begin[v+1]-1.
  std::vector<int64_t> strategy_begin;
  std::vector<int64_t> unary;  // cost per local strategy (its group's nodes and inner edges)

  // Adjacency, CSR by node. For the entry a of node v with neighbour w = adj_node[a], the matrix
  // at adj_matrix[a] is oriented for v: matrices[adj_matrix[a] + t * k(v) + s] is the edge's
  // cost when v takes s and w takes t, so one neighbour's contribution to all of v's strategies
  // is a contiguous row, and so is a message to v.
  std::vector<int64_t> adj_begin;
  std::vector<int32_t> adj_node;
  std::vector<int64_t> adj_matrix;
  std::vector<int64_t> adj_reverse;  // the entry of w for the same edge
  std::vector<int64_t> matrices;     // equal matrices stored once: entries may share an offset

  // Memory over compressed time points 0 .. num_times-1: items CSR by node; item i occupies
  // [item_lo[i], item_hi[i]) with usage[item_usage[i] + s] when its node takes s.
  bool has_limit = false;
  int64_t limit = 0;
  int32_t num_times = 0;
  std::vector<int64_t> item_begin;
  std::vector<int32_t> item_node, item_lo, item_hi;
  std::vector<int64_t> item_usage;
  std::vector<int64_t> usage;
  std::vector<int64_t> base_usage;  // per time point

  // Back to the Request: node v of the Request belongs to group_of[v] and takes
  // member_strategy[member_begin[v] + s] when its group takes s.
  std::vector<int32_t> group_of;
  std::vector<int64_t> member_begin;
  std::vector<int32_t> member_strategy;
  // Per group, the Request node whose strategy determines the group's (its strategies are the
  // group's, one to one).
  std::vector<int32_t> group_root;

  bool infeasible = false;  // proven: a node lost all strategies, or least usage > limit

  int32_t num_strategies(int32_t v) const {
    return static_cast<int32_t>(strategy_begin[v + 1] - strategy_begin[v]);
  }
};

// Builds the reduced problem of a valid request.
HeuristicProblem BuildHeuristicProblem(const Request& request);

// The Request's strategy indices of a local choice.
std::vector<int64_t> ToOriginalChoice(const HeuristicProblem& problem,
                                      const std::vector<int32_t>& choice);

// The local choice of a Request choice, read from each group's root node; empty when a root's
// strategy was reduced away (it was forbidden). Other members follow the root: functionally
// bound ones as any feasible choice has them, folded leaves at their best answer, so the result
// costs no more than `choice` when that is feasible.
std::vector<int32_t> FromOriginalChoice(const HeuristicProblem& problem,
                                        const std::vector<int64_t>& choice);

// Exact cost of a Request choice in 128 bits, and whether it is feasible: no forbidden entry and
// the memory limit held at every time point. The solver's own final check, independent of the
// reductions above.
struct ChoiceCheck {
  TotalCost cost = 0;
  bool feasible = false;
};
ChoiceCheck CheckChoice(const Request& request, const std::vector<int64_t>& choice);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_PROBLEM_H_
