// The local search state of the heuristic solver and its moves, over a HeuristicProblem.
//
// The state is a choice of one local strategy per node, its exact cost (forbidden entries count
// `big`) and its memory profile (a segment tree over the time points). The search minimises the
// *penalised* objective
//
//   f(s) = cost(s) + sum_v penalty_v[s(v)],
//   penalty_v[s] = sum over v's memory items i of price(i) * usage_i[s],
//
// where price(i) = sum of the memory prices lambda_t over the time points of item i: the
// Lagrangian relaxation of the memory limit (the solver sets the prices). With `enforce_memory`
// a move is taken only if the limit still holds at every time point afterwards; without it
// (the relaxed problem) memory is left to the prices.
//
// The move is the node move: the best response of one node to its neighbours' current
// strategies, f-optimal over its strategies (those keeping memory within the limit when
// enforced), evaluated in O(sum of its neighbours' strategy counts) through the adjacency's
// contiguous rows. Descend() repeats it to a local optimum.
#ifndef ALPA_SOLVER_HEURISTIC_SEARCH_H_
#define ALPA_SOLVER_HEURISTIC_SEARCH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "solver/heuristic_memory.h"
#include "solver/heuristic_problem.h"

namespace alpa::solver {

class LocalSearch {
 public:
  // `choice` must be within memory when `enforce_memory` (the caller checks with Fits()).
  LocalSearch(const HeuristicProblem& problem, std::vector<int32_t> choice, bool enforce_memory);

  const std::vector<int32_t>& choice() const { return choice_; }
  int64_t cost() const { return cost_; }  // exact cost of the choice
  bool Fits() const;                      // memory within the limit at every time point
  bool HasForbidden() const { return cost_ >= problem_.big; }
  const MemoryProfile& memory() const { return memory_; }

  // Sets the memory prices: lambda[t] per compressed time point (cost per unit of usage).
  void SetPrices(const std::vector<double>& lambda);

  // Replaces the choice (recomputing cost and memory); enforce_memory is unchanged.
  void Reset(std::vector<int32_t> choice);

  // One node move; returns whether the node changed.
  bool NodeMove(int32_t v);
  // Node moves until no node improves (worklist seeded with all nodes; a change re-queues the
  // neighbours). Returns the number of changes.
  int64_t Descend();

  // f-contributions of v's strategies given its neighbours (unary + penalty + incident edges).
  void Evaluate(int32_t v, std::vector<int64_t>& out) const;
  const std::vector<int64_t>& penalty() const { return penalty_; }
  // How far the integer penalties can exceed the exact ones over any choice: sum over nodes of
  // max_s (penalty_v[s] - exact_v[s]), at most half a unit per penalised node (rounding; the cap
  // at problem.big only lowers a penalty). A Lagrangian bound subtracts it.
  double penalty_excess() const { return penalty_excess_; }

  // Sets node strategies as one change (cost and memory updated), without any acceptance test.
  void Assign(const std::vector<std::pair<int32_t, int32_t>>& changes);

 private:
  int32_t k(int32_t v) const { return problem_.num_strategies(v); }
  // Whether v can move from its strategy to s within the memory limit.
  bool MemoryAllows(int32_t v, int32_t s);
  // Adds sign * v's usage at strategy s to the profile; moves v's usage from one strategy to
  // another.
  void AddMemory(int32_t v, int32_t s, int64_t sign);
  void MoveMemory(int32_t v, int32_t from, int32_t to);
  // Exact cost change of applying `changes` (node, new strategy) to the current choice.
  int64_t CostDelta(const std::vector<std::pair<int32_t, int32_t>>& changes);

  const HeuristicProblem& problem_;
  bool enforce_memory_;
  std::vector<int32_t> choice_;
  int64_t cost_ = 0;
  MemoryProfile memory_;
  std::vector<int64_t> penalty_;  // per local strategy
  double penalty_excess_ = 0;

  // Scratch space, kept to avoid allocations per move.
  std::vector<int64_t> scratch_;
  std::vector<int32_t> stamp_;  // changed marks of CostDelta, by node
  int32_t epoch_ = 0;
  std::vector<int32_t> old_choice_;
};

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_SEARCH_H_
