#include "solver/search_progress.h"

namespace alpa::solver {

std::optional<double> FirstWithin(const std::vector<Improvement>& improvements,
                                  TotalCost final_cost, double fraction) {
  const double threshold = (1 + fraction) * static_cast<double>(final_cost);
  for (const Improvement& improvement : improvements) {
    if (static_cast<double>(improvement.cost) <= threshold) return improvement.seconds;
  }
  return std::nullopt;
}

}  // namespace alpa::solver
