// A search's progress as SolveOptions::on_improvement reports it, and what reports read from it.
#ifndef ALPA_SOLVER_SEARCH_PROGRESS_H_
#define ALPA_SOLVER_SEARCH_PROGRESS_H_

#include <optional>
#include <vector>

#include "solver/request.h"

namespace alpa::solver {

// A better solution found during a search: seconds on the caller's clock, and its cost.
struct Improvement {
  double seconds = 0;
  TotalCost cost = 0;
};

// When the best cost first came within `fraction` of `final_cost` (0.01: within 1%); none
// without an improvement that close.
std::optional<double> FirstWithin(const std::vector<Improvement>& improvements,
                                  TotalCost final_cost, double fraction);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_SEARCH_PROGRESS_H_
