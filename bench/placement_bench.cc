// How much a memory-bound kernel's speed depends on where its buffers' pages landed, against how
// much it moves between two looks at the same buffers:
//
//   build/bench/placement_bench [PLACEMENTS] [MIB] [SECONDS]     (default 8, 64, 1)
//
// Maps PLACEMENTS sets of three f32 arrays of MIB MiB each, all alive at once (runtime/
// placed_buffers.h, as the profiler maps its memory-bound figures' buffers), then measures
// c = a + b on each set for SECONDS (the median of 50 ms runs), in two passes over the sets. It
// prints each set's two figures, the spread between sets (fastest over slowest, first pass) and
// the largest move of one set between its passes: when the first is far above the second, a
// figure measured on one allocation is one draw from the spread, whatever its number of runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "runtime/placed_buffers.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median GB/s of c = a + b over `elements` floats of `placement`, in 50 ms runs for `seconds`.
double AddBandwidth(const alpa::runtime::PlacedBuffers& buffers, int64_t placement,
                    int64_t elements, double seconds) {
  const auto* a = static_cast<const float*>(buffers.data(placement, 0));
  const auto* b = static_cast<const float*>(buffers.data(placement, 1));
  auto* c = static_cast<float*>(buffers.data(placement, 2));
  std::vector<double> runs;
  const double end = Now() + seconds;
  while (Now() < end || runs.empty()) {
    const double start = Now();
    int64_t adds = 0;
    while (Now() - start < 0.05) {
      for (int64_t i = 0; i < elements; ++i) c[i] = a[i] + b[i];
      ++adds;
    }
    runs.push_back(3.0 * 4 * static_cast<double>(elements * adds) / (Now() - start) / 1e9);
  }
  std::nth_element(runs.begin(), runs.begin() + runs.size() / 2, runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t placements = argc > 1 ? std::atoll(argv[1]) : 8;
  const int64_t mib = argc > 2 ? std::atoll(argv[2]) : 64;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 1.0;
  if (placements < 1 || mib < 1 || !(seconds > 0)) {
    fmt::print(stderr, "usage: placement_bench [PLACEMENTS >= 1] [MIB >= 1] [SECONDS > 0]\n");
    return 2;
  }
  const int64_t elements = mib * (int64_t{1} << 20) / 4;
  alpa::runtime::PlacedBuffers buffers({{alpa::ir::DType::kF32, elements},
                                        {alpa::ir::DType::kF32, elements},
                                        {alpa::ir::DType::kF32, elements}},
                                       placements);
  std::vector<std::vector<double>> passes(2);
  for (std::vector<double>& pass : passes) {
    for (int64_t p = 0; p < placements; ++p) {
      pass.push_back(AddBandwidth(buffers, p, elements, seconds));
    }
  }
  fmt::print("c = a + b, 3 x {} MiB f32, {} placements, {} s each, two passes\n", mib, placements,
             seconds);
  fmt::print("placement  pass 1 GB/s  pass 2 GB/s\n");
  double largest_move = 1;
  for (int64_t p = 0; p < placements; ++p) {
    const double first = passes[0][p], second = passes[1][p];
    fmt::print("{:>9}  {:>11.1f}  {:>11.1f}\n", p, first, second);
    largest_move = std::max(largest_move, std::max(first, second) / std::min(first, second));
  }
  const auto [slowest, fastest] = std::minmax_element(passes[0].begin(), passes[0].end());
  fmt::print("between placements (fastest / slowest, pass 1): {:.2f}x\n", *fastest / *slowest);
  fmt::print("one placement between its passes (largest):     {:.2f}x\n", largest_move);
  return 0;
}
