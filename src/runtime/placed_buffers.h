// Buffers for the profiler in several placements in physical memory.
//
// Why. On the project's virtual machines, how fast a memory-bound kernel runs depends on where
// the pages of its buffers landed, and an allocation keeps its pages for its life. c = a + b over
// 64 MiB arrays, ten sets allocated side by side in one process: 21 to 28 GB/s from set to set,
// most sets within 5% of themselves a pass later (docs/cost-model.md, "How stable a profile is").
// A figure measured on buffers allocated once measures one such draw, so two profiles disagree by
// as much as two draws do, however many runs each takes. The cost model wants what a future
// process will see, whose buffers land wherever they land: the median over several draws.
//
// How. Each buffer is an anonymous mapping of its own (not the heap, which would hand a freed
// block back with the same pages), and every placement's set is mapped and filled before the next
// is, all at construction: nothing is unmapped while the profile measures. Mapping afresh before
// every run instead was tried and is worse: these machines report freed memory to their host
// (virtio-balloon free page reporting), and the reporting, with the host's faults on the next
// touch, ran beside the timed runs: 48 of 51 figures were flagged, the 64 MiB add at half the
// speed the next profile measured on one placement.
#ifndef ALPA_RUNTIME_PLACED_BUFFERS_H_
#define ALPA_RUNTIME_PLACED_BUFFERS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/dtype.h"

namespace alpa::runtime {

class PlacedBuffers {
 public:
  struct Spec {
    ir::DType dtype = ir::DType::kF32;
    int64_t elements = 0;
  };

  // `placements` (at least 1) sets of one buffer per spec, every element 0.5 in its dtype (small
  // enough that no product or sum of the profiled shapes overflows, in any of them; integer
  // dtypes: zeros). Aborts when the memory cannot be mapped, as std::vector does when it cannot
  // allocate.
  PlacedBuffers(std::vector<Spec> specs, int64_t placements);

  // Buffer `buffer` of placement `placement` (0 <= placement < placements()).
  void* data(int64_t placement, size_t buffer) const {
    return sets_[static_cast<size_t>(placement)][buffer].get();
  }
  size_t size() const { return specs_.size(); }
  int64_t placements() const { return static_cast<int64_t>(sets_.size()); }

 private:
  struct Unmap {
    int64_t bytes = 0;
    void operator()(void* data) const;
  };
  using Mapping = std::unique_ptr<void, Unmap>;

  std::vector<Mapping> MapSet() const;

  std::vector<Spec> specs_;
  std::vector<std::vector<Mapping>> sets_;  // by placement
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PLACED_BUFFERS_H_
