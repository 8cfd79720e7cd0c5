#include "solver/heuristic_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace alpa::solver {

LocalSearch::LocalSearch(const HeuristicProblem& problem, std::vector<int32_t> choice,
                         bool enforce_memory)
    : problem_(problem),
      enforce_memory_(enforce_memory && problem.has_limit),
      memory_(problem.base_usage),
      penalty_(problem.unary.size(), 0),
      stamp_(problem.num_nodes, 0),
      old_choice_(problem.num_nodes, 0) {
  Reset(std::move(choice));
}

void LocalSearch::Reset(std::vector<int32_t> choice) {
  // Undo the old choice's usage, then add the new one's.
  for (int32_t v = 0; v < problem_.num_nodes && !choice_.empty(); ++v) {
    AddMemory(v, choice_[v], -1);
  }
  choice_ = std::move(choice);
  cost_ = 0;
  for (int32_t v = 0; v < problem_.num_nodes; ++v) {
    cost_ += problem_.unary[problem_.strategy_begin[v] + choice_[v]];
    AddMemory(v, choice_[v], 1);
    for (int64_t a = problem_.adj_begin[v]; a < problem_.adj_begin[v + 1]; ++a) {
      const int32_t w = problem_.adj_node[a];
      if (w < v) continue;  // each edge once
      cost_ += problem_.matrices[problem_.adj_matrix[a] + int64_t{choice_[w]} * k(v) + choice_[v]];
    }
  }
}

void LocalSearch::AddMemory(int32_t v, int32_t s, int64_t sign) {
  for (int64_t i = problem_.item_begin[v]; i < problem_.item_begin[v + 1]; ++i) {
    memory_.Add(problem_.item_lo[i], problem_.item_hi[i],
                sign * problem_.usage[problem_.item_usage[i] + s]);
  }
}

void LocalSearch::MoveMemory(int32_t v, int32_t from, int32_t to) {
  for (int64_t i = problem_.item_begin[v]; i < problem_.item_begin[v + 1]; ++i) {
    const int64_t* usage = &problem_.usage[problem_.item_usage[i]];
    memory_.Add(problem_.item_lo[i], problem_.item_hi[i], usage[to] - usage[from]);
  }
}

bool LocalSearch::Fits() const {
  return !problem_.has_limit || memory_.GlobalMax() <= problem_.limit;
}

void LocalSearch::SetPrices(const std::vector<double>& lambda) {
  std::vector<double> prefix(lambda.size() + 1, 0);
  for (size_t t = 0; t < lambda.size(); ++t) prefix[t + 1] = prefix[t] + lambda[t];
  const double cap = static_cast<double>(problem_.big);
  std::vector<double> penalty;
  penalty_excess_ = 0;
  for (int32_t v = 0; v < problem_.num_nodes; ++v) {
    penalty.assign(k(v), 0.0);
    for (int64_t i = problem_.item_begin[v]; i < problem_.item_begin[v + 1]; ++i) {
      const double price = prefix[problem_.item_hi[i]] - prefix[problem_.item_lo[i]];
      const int64_t* usage = &problem_.usage[problem_.item_usage[i]];
      for (int32_t s = 0; s < k(v); ++s) penalty[s] += price * static_cast<double>(usage[s]);
    }
    double excess = 0;
    for (int32_t s = 0; s < k(v); ++s) {
      const int64_t rounded = std::llround(std::min(cap, penalty[s]));
      penalty_[problem_.strategy_begin[v] + s] = rounded;
      excess = std::max(excess, static_cast<double>(rounded) - penalty[s]);
    }
    penalty_excess_ += excess;
  }
}

void LocalSearch::Evaluate(int32_t v, std::vector<int64_t>& out) const {
  const int32_t kv = k(v);
  const int64_t base = problem_.strategy_begin[v];
  out.resize(kv);
  for (int32_t s = 0; s < kv; ++s) out[s] = problem_.unary[base + s] + penalty_[base + s];
  for (int64_t a = problem_.adj_begin[v]; a < problem_.adj_begin[v + 1]; ++a) {
    const int64_t* row =
        &problem_.matrices[problem_.adj_matrix[a] + int64_t{choice_[problem_.adj_node[a]]} * kv];
    for (int32_t s = 0; s < kv; ++s) out[s] += row[s];
  }
}

bool LocalSearch::MemoryAllows(int32_t v, int32_t s) {
  if (!enforce_memory_) return true;
  const int64_t first = problem_.item_begin[v], last = problem_.item_begin[v + 1];
  const int32_t cur = choice_[v];
  if (last - first == 1) {
    const int64_t* usage = &problem_.usage[problem_.item_usage[first]];
    const int64_t delta = usage[s] - usage[cur];
    return delta <= 0 ||
           memory_.Max(problem_.item_lo[first], problem_.item_hi[first]) + delta <= problem_.limit;
  }
  // Items may overlap: try the move on the profile and take it back.
  bool grows = false;
  for (int64_t i = first; i < last && !grows; ++i) {
    const int64_t* usage = &problem_.usage[problem_.item_usage[i]];
    grows = usage[s] > usage[cur];
  }
  if (!grows) return true;
  MoveMemory(v, cur, s);
  const bool fits = Fits();
  MoveMemory(v, s, cur);
  return fits;
}

bool LocalSearch::NodeMove(int32_t v) {
  const int32_t kv = k(v);
  if (kv == 1) return false;
  Evaluate(v, scratch_);
  const int32_t cur = choice_[v];
  const int64_t base = problem_.strategy_begin[v];
  // The best strategy that fits: candidates in order of f, rejected ones marked by +inf.
  int32_t best = cur;
  while (true) {
    int32_t candidate = cur;
    for (int32_t s = 0; s < kv; ++s) {
      if (scratch_[s] < scratch_[candidate]) candidate = s;
    }
    if (candidate == cur) break;
    if (MemoryAllows(v, candidate)) {
      best = candidate;
      break;
    }
    scratch_[candidate] = std::numeric_limits<int64_t>::max();
  }
  if (best == cur) return false;
  cost_ += (scratch_[best] - penalty_[base + best]) - (scratch_[cur] - penalty_[base + cur]);
  MoveMemory(v, cur, best);
  choice_[v] = best;
  return true;
}

int64_t LocalSearch::Descend() {
  const int32_t n = problem_.num_nodes;
  std::vector<int32_t> queue(n);
  std::vector<char> queued(n, 1);
  for (int32_t v = 0; v < n; ++v) queue[v] = v;
  int64_t changes = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int32_t v = queue[head];
    queued[v] = 0;
    if (!NodeMove(v)) continue;
    ++changes;
    for (int64_t a = problem_.adj_begin[v]; a < problem_.adj_begin[v + 1]; ++a) {
      const int32_t w = problem_.adj_node[a];
      if (!queued[w]) {
        queued[w] = 1;
        queue.push_back(w);
      }
    }
  }
  return changes;
}

int64_t LocalSearch::CostDelta(const std::vector<std::pair<int32_t, int32_t>>& changes) {
  // Marks the changed nodes with their old strategy; an edge between two changed nodes is
  // counted once, from its smaller end.
  ++epoch_;
  for (const auto& [x, s] : changes) {
    stamp_[x] = epoch_;
    old_choice_[x] = choice_[x];
  }
  auto old_of = [&](int32_t w) { return stamp_[w] == epoch_ ? old_choice_[w] : choice_[w]; };
  for (const auto& [x, s] : changes) choice_[x] = s;
  int64_t delta = 0;
  for (const auto& [x, s] : changes) {
    const int32_t kx = k(x);
    const int64_t base = problem_.strategy_begin[x];
    const int32_t old = old_choice_[x];
    delta += problem_.unary[base + s] - problem_.unary[base + old];
    for (int64_t a = problem_.adj_begin[x]; a < problem_.adj_begin[x + 1]; ++a) {
      const int32_t w = problem_.adj_node[a];
      if (stamp_[w] == epoch_ && w < x) continue;
      const int64_t* m = &problem_.matrices[problem_.adj_matrix[a]];
      delta += m[int64_t{choice_[w]} * kx + s] - m[int64_t{old_of(w)} * kx + old];
    }
  }
  for (const auto& [x, s] : changes) choice_[x] = old_choice_[x];
  return delta;
}

void LocalSearch::Assign(const std::vector<std::pair<int32_t, int32_t>>& changes) {
  cost_ += CostDelta(changes);
  for (const auto& [x, s] : changes) {
    MoveMemory(x, choice_[x], s);
    choice_[x] = s;
  }
}

}  // namespace alpa::solver
