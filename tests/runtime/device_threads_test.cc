// DeviceThreads: every device's job on its own thread, the same thread run after run (what it
// keeps stays), bound to its share of the cores, statuses by device, and callers from several
// threads taking turns.
#include "runtime/device_threads.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace alpa::runtime {
namespace {

TEST(DeviceCoresTest, EachDeviceGetsItsShareOfTheAllowedCores) {
  EXPECT_EQ(DeviceCores(0, 2, {0, 1}), (std::vector<int>{0}));
  EXPECT_EQ(DeviceCores(1, 2, {0, 1}), (std::vector<int>{1}));
  EXPECT_EQ(DeviceCores(0, 1, {0, 1}), (std::vector<int>{0, 1}));
  // Three devices of 8 cores: two each, two cores idle (a device's kernels get as many threads).
  EXPECT_EQ(DeviceCores(2, 3, {0, 1, 2, 3, 4, 5, 6, 7}), (std::vector<int>{4, 5}));
  // The allowed cores need not be the machine's first ones (taskset, a container's cpuset).
  EXPECT_EQ(DeviceCores(1, 2, {2, 5, 7, 9}), (std::vector<int>{7, 9}));
}

TEST(DeviceCoresTest, MoreDevicesThanCoresShareThemRoundRobin) {
  std::vector<std::vector<int>> cores;
  for (int64_t device = 0; device < 4; ++device) cores.push_back(DeviceCores(device, 4, {0, 1}));
  EXPECT_EQ(cores, (std::vector<std::vector<int>>{{0}, {1}, {0}, {1}}));
}

TEST(DeviceThreadsTest, EachThreadRunsOnItsDevicesCores) {
  DeviceThreads threads(2);
  std::vector<std::vector<int>> bound(2);
  threads.Run([&](int64_t device) {
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    for (int core = 0; core < CPU_SETSIZE; ++core) {
      if (CPU_ISSET(core, &set)) bound[static_cast<size_t>(device)].push_back(core);
    }
    return Status::Ok();
  });
  const std::vector<int> allowed = AllowedCores();
  for (int64_t device = 0; device < 2; ++device) {
    EXPECT_EQ(threads.cores(device), DeviceCores(device, 2, allowed));
    EXPECT_EQ(bound[static_cast<size_t>(device)], threads.cores(device)) << "device " << device;
  }
}

TEST(DeviceThreadsTest, EachDeviceKeepsItsThreadFromRunToRun) {
  DeviceThreads threads(3);
  EXPECT_EQ(threads.devices(), 3);
  std::vector<std::thread::id> first(3), second(3);
  thread_local int runs_on_this_thread = 0;
  std::vector<int> seen(3);
  ASSERT_EQ(threads
                .Run([&](int64_t device) {
                  first[static_cast<size_t>(device)] = std::this_thread::get_id();
                  ++runs_on_this_thread;
                  return Status::Ok();
                })
                .size(),
            3u);
  threads.Run([&](int64_t device) {
    second[static_cast<size_t>(device)] = std::this_thread::get_id();
    seen[static_cast<size_t>(device)] = ++runs_on_this_thread;
    return Status::Ok();
  });
  EXPECT_EQ(first, second);
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), 3u);
  EXPECT_EQ(first[0] == std::this_thread::get_id(), false);
  EXPECT_EQ(seen, (std::vector<int>{2, 2, 2}));  // a thread-local value survives the run
}

TEST(DeviceThreadsTest, StatusesComeBackByDevice) {
  DeviceThreads threads(2);
  const std::vector<Status> statuses = threads.Run([](int64_t device) {
    return device == 1 ? InvalidArgument("device {} failed", device) : Status::Ok();
  });
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].message(), "device 1 failed");
  // A failed run leaves the threads ready for the next.
  EXPECT_TRUE(threads.Run([](int64_t) { return Status::Ok(); })[1].ok());
}

TEST(DeviceThreadsTest, CallersFromSeveralThreadsTakeTurns) {
  DeviceThreads threads(2);
  std::atomic<int> inside{0}, most{0}, jobs{0};
  auto call = [&] {
    for (int i = 0; i < 50; ++i) {
      threads.Run([&](int64_t) {
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        ++jobs;
        --inside;
        return Status::Ok();
      });
    }
  };
  std::thread a(call), b(call);
  a.join();
  b.join();
  EXPECT_EQ(jobs.load(), 2 * 50 * 2);
  EXPECT_LE(most.load(), 2);  // never more jobs at once than one run's devices
}

}  // namespace
}  // namespace alpa::runtime
