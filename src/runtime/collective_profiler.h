// What the profiler needs to time collectives (profiler.h): the N devices of `local:N` as N
// threads over the in-process communicator, driven by the profiling thread.
//
// The calling thread is device 0 and keeps the clock; devices 1..N-1 are helper threads that wait
// for device 0's commands. A command (kind, elements, count) is posted to a mailbox the helpers
// sleep on, not sent through the communicator: the profiler measures other figures between two
// collectives (profiler.h measures in rounds), for as long as those take, and a helper waiting in a
// collective would time out or keep a core busy. Every device then (re)sizes its buffers, meets the
// others at a barrier, and makes `count` back-to-back calls of the collective over all N devices.
// Device 0 times the calls only: from the barrier to the end of its last call, which ends once
// every device is done (in_process_communicator.h), so the figure is the time of the slowest
// device, with no command or allocation inside it.
#ifndef ALPA_RUNTIME_COLLECTIVE_PROFILER_H_
#define ALPA_RUNTIME_COLLECTIVE_PROFILER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/in_process_communicator.h"
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
  // Starts the helper threads of `devices` devices (at least 2).
  explicit CollectiveTimer(int64_t devices);
  ~CollectiveTimer();  // stops and joins the helpers
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

  // Seconds that `count` back-to-back collectives of `kind` (one of ProfiledCollectives()) over
  // all devices took, on `elements` f32 elements (CollectiveElements).
  Result<double> Time(std::string_view kind, int64_t elements, int64_t count);

  // One device's buffers, grown to the largest command so far and reused.
  struct Buffers {
    std::vector<float> input, output;
  };

 private:
  // What device 0 asks of every device.
  struct Command {
    int64_t kind = 0;  // an index into ProfiledCollectives(), or kStop
    int64_t elements = 0;
    int64_t count = 0;
  };
  static constexpr int64_t kStop = -1;

  void Post(const Command& command);
  // A helper device: runs each posted command until told to stop or a collective fails (device 0
  // then gets the same error from its own call).
  void Follow(int64_t rank);

  InProcessWorld world_;
  std::vector<int64_t> group_;
  Buffers buffers_;  // device 0's
  std::mutex mutex_;
  std::condition_variable posted_;
  Command command_;              // the latest posted, guarded by mutex_
  int64_t commands_posted_ = 0;  // guarded by mutex_
  std::vector<std::thread> helpers_;
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_COLLECTIVE_PROFILER_H_
