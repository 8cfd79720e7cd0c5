#include "solver/heuristic_repair.h"

#include <algorithm>
#include <limits>

namespace alpa::solver {

Repairer::Repairer(const HeuristicProblem& problem)
    : problem_(problem), seen_(problem.num_nodes, -1) {
  const int32_t blocks = (problem.num_times + kBlock - 1) / kBlock;
  block_begin_.assign(blocks + 1, 0);
  const int64_t items = static_cast<int64_t>(problem.item_lo.size());
  for (int64_t i = 0; i < items; ++i) {
    for (int32_t b = problem.item_lo[i] / kBlock; b <= (problem.item_hi[i] - 1) / kBlock; ++b) {
      ++block_begin_[b + 1];
    }
  }
  for (int32_t b = 0; b < blocks; ++b) block_begin_[b + 1] += block_begin_[b];
  block_items_.resize(block_begin_[blocks]);
  std::vector<int64_t> fill(block_begin_.begin(), block_begin_.end() - 1);
  for (int64_t i = 0; i < items; ++i) {
    for (int32_t b = problem.item_lo[i] / kBlock; b <= (problem.item_hi[i] - 1) / kBlock; ++b) {
      block_items_[fill[b]++] = i;
    }
  }
}

bool Repairer::Repair(LocalSearch& search, int64_t max_steps, const std::function<bool()>& stop) {
  const HeuristicProblem& p = problem_;
  if (!p.has_limit) return true;
  for (int64_t step = 0; step < max_steps; ++step) {
    const int32_t t = search.memory().FirstAbove(p.limit);
    if (t < 0) return true;
    if (step % 64 == 63 && stop()) return false;
    const int64_t excess = search.memory().At(t) - p.limit;
    ++epoch_;
    double best_ratio = std::numeric_limits<double>::infinity();
    int32_t best_node = -1, best_strategy = -1;
    const int32_t block = t / kBlock;
    for (int64_t b = block_begin_[block]; b < block_begin_[block + 1]; ++b) {
      const int64_t item = block_items_[b];
      const int32_t v = p.item_node[item];
      if (p.item_lo[item] > t || p.item_hi[item] <= t || seen_[v] == epoch_) continue;
      seen_[v] = epoch_;
      const int32_t k = p.num_strategies(v), cur = search.choice()[v];
      // Usage removed at t by each strategy, over all of v's items live at t.
      removed_.assign(k, 0);
      for (int64_t i = p.item_begin[v]; i < p.item_begin[v + 1]; ++i) {
        if (p.item_lo[i] > t || p.item_hi[i] <= t) continue;
        const int64_t* usage = &p.usage[p.item_usage[i]];
        for (int32_t s = 0; s < k; ++s) removed_[s] += usage[cur] - usage[s];
      }
      search.Evaluate(v, values_);
      const int64_t* penalty = &search.penalty()[p.strategy_begin[v]];
      const int64_t now = values_[cur] - penalty[cur];
      for (int32_t s = 0; s < k; ++s) {
        if (removed_[s] <= 0) continue;
        const double ratio = static_cast<double>(values_[s] - penalty[s] - now) /
                             static_cast<double>(std::min(removed_[s], excess));
        if (ratio < best_ratio) {
          best_ratio = ratio;
          best_node = v;
          best_strategy = s;
        }
      }
    }
    if (best_node < 0) return false;  // nothing live at t can shrink
    search.Assign({{best_node, best_strategy}});
  }
  return search.Fits();
}

}  // namespace alpa::solver
