#include "runtime/core_round_trip.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/profiler.h"

namespace alpa::runtime {
namespace {

// The first two cores in this process's affinity mask, or fewer.
std::vector<int> TwoCores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return cores;
  for (int cpu = 0; cpu < CPU_SETSIZE && cores.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
  }
  return cores;
}

bool PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// Restores the calling thread's affinity mask when it goes out of scope.
class SavedAffinity {
 public:
  SavedAffinity() { saved_ = pthread_getaffinity_np(pthread_self(), sizeof(mask_), &mask_) == 0; }
  ~SavedAffinity() {
    if (saved_) pthread_setaffinity_np(pthread_self(), sizeof(mask_), &mask_);
  }
  SavedAffinity(const SavedAffinity&) = delete;
  SavedAffinity& operator=(const SavedAffinity&) = delete;

 private:
  cpu_set_t mask_;
  bool saved_ = false;
};

}  // namespace

bool CanTimeCoreRoundTrips() { return TwoCores().size() == 2; }

Result<double> TimeCoreRoundTrips(int64_t count) {
  const std::vector<int> cores = TwoCores();
  if (cores.size() < 2) {
    return FailedPrecondition("the core round trip needs two cores; this process may run on {}",
                              cores.size());
  }
  // The line holds 2i + 1 once the timing thread has sent round trip i, 2i + 2 once it is back.
  alignas(64) std::atomic<int64_t> line{0};
  std::thread echo([&line, count, core = cores[1]] {
    PinThisThread(core);
    for (int64_t i = 0; i < count; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  SavedAffinity restore;
  PinThisThread(cores[0]);
  const auto begin = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  echo.join();
  return std::chrono::duration<double>(end - begin).count();
}

bool CoresPlacedDifferently(double seconds_a, double seconds_b) {
  constexpr double kPlacementRatio = 2;
  const double low = std::min(seconds_a, seconds_b), high = std::max(seconds_a, seconds_b);
  return low > 0 && high > kPlacementRatio * low;
}

bool CoresMovedDuring(const std::vector<double>& round_trips) {
  return round_trips.size() >= 2 &&
         CoresPlacedDifferently(Quantile(round_trips, 0.25), Quantile(round_trips, 0.75));
}

}  // namespace alpa::runtime
