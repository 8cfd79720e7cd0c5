// What the profiler needs to time collectives (profiler.h): the N devices of `local:N` as N
// threads over the in-process communicator, the runtime's own setting (runtime/device_threads.h).
//
// A timing is one run on the device threads: every device takes its buffers of the timing's
// placement (mapped when the timer starts), meets the others at a barrier, and makes `count`
// back-to-back calls of the collective over all N devices. Device 0 times the calls only: from the
// barrier to the end of its last call, which ends once every device is done
// (in_process_communicator.h), so the figure is the time of the slowest device, with no hand-over
// or allocation inside it. Between two timings the threads sleep: the profiler measures other
// figures there (profiler.h measures in rounds), for as long as those take.
#ifndef ALPA_RUNTIME_COLLECTIVE_PROFILER_H_
#define ALPA_RUNTIME_COLLECTIVE_PROFILER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device_threads.h"
#include "runtime/in_process_communicator.h"
#include "runtime/placed_buffers.h"
#include "support/status.h"

namespace alpa::runtime {

// The collectives the profiler measures, in the cost model's spelling.
const std::vector<std::string>& ProfiledCollectives();  // all-reduce, all-gather, ...
// Whether `kind` is one of them.
bool IsProfiledCollective(std::string_view kind);

// Elements of f32 a collective of `bytes` uses over `devices`: bytes / 4 rounded down to a
// multiple of `devices`, so that reduce-scatter and all-to-all split it evenly. `bytes` is the
// size collective_cost.h prices: the all-reduce buffer, the all-gather output, the
// reduce-scatter input, the all-to-all per-device buffer.
int64_t CollectiveElements(int64_t bytes, int64_t devices);

class CollectiveTimer {
 public:
  // Starts the threads of `devices` devices (at least 2), and has each map its buffers in
  // `placements` placements (at least 1; placed_buffers.h), each large enough for collectives of
  // up to `max_elements`, so that no timing maps memory.
  CollectiveTimer(int64_t devices, int64_t placements, int64_t max_elements);

  // Seconds that `count` back-to-back collectives of `kind` (one of ProfiledCollectives()) over
  // all devices took, on `elements` f32 elements (CollectiveElements, at most max_elements), in
  // every device's buffers of placement `placement`.
  Result<double> Time(std::string_view kind, int64_t elements, int64_t count,
                      int64_t placement = 0);

  int64_t placements() const { return placements_; }

 private:
  InProcessWorld world_;
  std::vector<int64_t> group_;
  int64_t placements_ = 1;
  int64_t max_elements_ = 0;
  std::vector<std::unique_ptr<PlacedBuffers>> buffers_;  // by device: {input, output}
  DeviceThreads threads_;
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_COLLECTIVE_PROFILER_H_
