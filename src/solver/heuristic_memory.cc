#include "solver/heuristic_memory.h"

#include <algorithm>
#include <limits>

namespace alpa::solver {

MemoryProfile::MemoryProfile(const std::vector<int64_t>& initial)
    : size_(static_cast<int32_t>(initial.size())),
      max_(4 * initial.size() + 4, 0),
      add_(4 * initial.size() + 4, 0) {
  if (size_ > 0) Build(1, 0, size_, initial);
}

void MemoryProfile::Build(int32_t x, int32_t lo, int32_t hi, const std::vector<int64_t>& initial) {
  if (hi - lo == 1) {
    max_[x] = add_[x] = initial[lo];
    return;
  }
  const int32_t mid = (lo + hi) / 2;
  Build(2 * x, lo, mid, initial);
  Build(2 * x + 1, mid, hi, initial);
  max_[x] = std::max(max_[2 * x], max_[2 * x + 1]);
}

void MemoryProfile::Add(int32_t lo, int32_t hi, int64_t delta) {
  if (lo < hi && delta != 0) Add(1, 0, size_, lo, hi, delta);
}

void MemoryProfile::Add(int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b, int64_t delta) {
  if (a <= lo && hi <= b) {
    max_[x] += delta;
    add_[x] += delta;
    return;
  }
  const int32_t mid = (lo + hi) / 2;
  if (a < mid) Add(2 * x, lo, mid, a, b, delta);
  if (b > mid) Add(2 * x + 1, mid, hi, a, b, delta);
  // A leaf's add_ is its whole value; an inner vertex's add_ applies on top of its children.
  max_[x] = add_[x] + std::max(max_[2 * x], max_[2 * x + 1]);
}

int64_t MemoryProfile::Max(int32_t lo, int32_t hi) const { return Max(1, 0, size_, lo, hi); }

int64_t MemoryProfile::Max(int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b) const {
  if (a <= lo && hi <= b) return max_[x];
  const int32_t mid = (lo + hi) / 2;
  int64_t best = std::numeric_limits<int64_t>::min();
  if (a < mid) best = std::max(best, Max(2 * x, lo, mid, a, b));
  if (b > mid) best = std::max(best, Max(2 * x + 1, mid, hi, a, b));
  return add_[x] + best;
}

int32_t MemoryProfile::FirstAbove(int64_t limit) const {
  if (size_ == 0 || max_[1] <= limit) return -1;
  // Descend towards the leftmost child whose maximum (plus the adds above it) exceeds limit.
  int32_t x = 1, lo = 0, hi = size_;
  int64_t above = 0;  // sum of add_ on the path above x
  while (hi - lo > 1) {
    above += add_[x];
    const int32_t mid = (lo + hi) / 2;
    if (above + max_[2 * x] > limit) {
      x = 2 * x;
      hi = mid;
    } else {
      x = 2 * x + 1;
      lo = mid;
    }
  }
  return lo;
}

std::vector<int64_t> MemoryProfile::Values() const {
  std::vector<int64_t> out(size_);
  if (size_ > 0) Values(1, 0, size_, 0, out);
  return out;
}

void MemoryProfile::Values(int32_t x, int32_t lo, int32_t hi, int64_t above,
                           std::vector<int64_t>& out) const {
  if (hi - lo == 1) {
    out[lo] = above + add_[x];
    return;
  }
  const int32_t mid = (lo + hi) / 2;
  Values(2 * x, lo, mid, above + add_[x], out);
  Values(2 * x + 1, mid, hi, above + add_[x], out);
}

}  // namespace alpa::solver
