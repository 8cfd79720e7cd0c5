// Memory usage over the compressed time points of a HeuristicProblem: a segment tree with range
// add and range maximum, both O(log T).
//
// Each tree vertex keeps `max[x] = add[x] + max(max[left], max[right])`, where add[x] is the
// pending addition to its whole range; adds are never pushed down, so a query sums the adds on
// the path from the root.
#ifndef ALPA_SOLVER_HEURISTIC_MEMORY_H_
#define ALPA_SOLVER_HEURISTIC_MEMORY_H_

#include <cstdint>
#include <vector>

namespace alpa::solver {

class MemoryProfile {
 public:
  explicit MemoryProfile(const std::vector<int64_t>& initial);

  // Adds `delta` at every point of [lo, hi).
  void Add(int32_t lo, int32_t hi, int64_t delta);
  // The maximum over [lo, hi); lo < hi.
  int64_t Max(int32_t lo, int32_t hi) const;
  int64_t GlobalMax() const { return size_ == 0 ? 0 : max_[1]; }
  // The usage at one point.
  int64_t At(int32_t t) const { return Max(t, t + 1); }
  // The first point whose usage exceeds `limit`, or -1.
  int32_t FirstAbove(int64_t limit) const;
  // The usage at every point, O(T).
  std::vector<int64_t> Values() const;

 private:
  void Build(int32_t x, int32_t lo, int32_t hi, const std::vector<int64_t>& initial);
  void Add(int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b, int64_t delta);
  int64_t Max(int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b) const;
  void Values(int32_t x, int32_t lo, int32_t hi, int64_t above, std::vector<int64_t>& out) const;

  int32_t size_;
  std::vector<int64_t> max_, add_;
};

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_MEMORY_H_
