// One thread per in-process device that lives from one run to the next, as a device's worker
// does. A step then starts without spawning threads (0.15 to 0.6 ms a step for two devices on
// the project's 2-core machines, where gpt-tiny's whole step takes about 4 ms), and what a thread
// keeps stays warm from step to step: its OpenMP state and the kernels' per-thread scratch
// (kernels/element_type.h), which a fresh thread would allocate and page-fault again.
//
// Each thread is bound to its device's share of the cores (DeviceCores), as Open MPI binds each
// rank to its cores, and the OpenMP threads a device's kernels start inherit that binding. Left
// to the scheduler, two devices' threads on this project's 2-core machines were at times woken
// onto one core: the profiler's collectives of 256 KiB took 1.3 to 1.6 times as long as with
// each device on its own core (docs/cost-model.md). Two processes started side by side bind to
// the same cores, as two mpiruns do.
#ifndef ALPA_RUNTIME_DEVICE_THREADS_H_
#define ALPA_RUNTIME_DEVICE_THREADS_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "support/status.h"

namespace alpa::runtime {

// The cores the calling thread may run on (its affinity mask: the process's, unless the thread
// was bound), ascending; every core the machine has when the mask cannot be read.
std::vector<int> AllowedCores();

// The cores of device `device` (0 <= device < devices) among `allowed`: with at least as many
// cores as devices, its share of allowed.size() / devices consecutive cores (the remainder of
// the division idle); with more devices than cores, the one core allowed[device % size], shared.
std::vector<int> DeviceCores(int64_t device, int64_t devices, const std::vector<int>& allowed);

// One status for a run of every device: ok when all are, else "WHAT on N devices failed: "
// and every failing device's message ("device d: ..."), the devices' own errors before the
// timeouts they caused (a peer blocked on a device that failed gives up after its timeout), with
// the first own error's code.
Status CombineDeviceStatuses(const std::vector<Status>& statuses, std::string_view what);

class DeviceThreads {
 public:
  // Starts one thread per device, each bound to DeviceCores(device, devices, AllowedCores()).
  explicit DeviceThreads(int64_t devices);
  ~DeviceThreads();  // finishes the run in flight, then joins the threads
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  int64_t devices() const { return static_cast<int64_t>(threads_.size()); }
  // The cores device `device`'s thread is bound to: as many as its kernels should use.
  const std::vector<int>& cores(int64_t device) const {
    return cores_[static_cast<size_t>(device)];
  }

  // Runs job(d) on device d's thread for every device, waits for all of them and returns each
  // one's status, by device. Runs from several callers take turns.
  std::vector<Status> Run(const std::function<Status(int64_t device)>& job);

 private:
  void Serve(int64_t device);

  std::mutex turn_;  // one Run at a time
  std::mutex mutex_;
  std::condition_variable started_, finished_;
  const std::function<Status(int64_t)>* job_ = nullptr;
  uint64_t generation_ = 0;  // counts the runs started; a thread serves each once
  int64_t running_ = 0;      // devices still running the current job
  bool stopping_ = false;
  std::vector<Status> statuses_;
  std::vector<std::vector<int>> cores_;  // by device
  std::vector<std::thread> threads_;
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_DEVICE_THREADS_H_
