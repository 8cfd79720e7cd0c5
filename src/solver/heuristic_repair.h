// Repair of a choice that breaks the memory limit, for the heuristic solver.
//
// Greedy: while some time point t is over the limit (the first one), among the nodes with an
// item live at t and their strategies that lower the usage at t, take the one of least
//
//   (cost increase) / min(usage removed at t, overload at t),
//
// a cost decrease being best of all. Nodes live at t are found through a bucketed index: the
// time axis is cut into blocks, each listing the items that overlap it.
#ifndef ALPA_SOLVER_HEURISTIC_REPAIR_H_
#define ALPA_SOLVER_HEURISTIC_REPAIR_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "solver/heuristic_problem.h"
#include "solver/heuristic_search.h"

namespace alpa::solver {

class Repairer {
 public:
  explicit Repairer(const HeuristicProblem& problem);

  // Repairs `search` (which must not enforce memory while repairing) in at most `max_steps`
  // moves, checking `stop` now and then; returns whether its memory fits.
  bool Repair(LocalSearch& search, int64_t max_steps, const std::function<bool()>& stop);

 private:
  static constexpr int32_t kBlock = 64;  // time points per block

  const HeuristicProblem& problem_;
  std::vector<int64_t> block_begin_;  // CSR: items overlapping each block
  std::vector<int64_t> block_items_;
  std::vector<int32_t> seen_;  // per node: the step (epoch) that evaluated it
  int32_t epoch_ = 0;
  std::vector<int64_t> values_, removed_;
};

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_REPAIR_H_
