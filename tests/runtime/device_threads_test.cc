// DeviceThreads: every device's job on its own thread, the same thread run after run (what it
// keeps stays), statuses by device, and callers from several threads taking turns.
#include "runtime/device_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace alpa::runtime {
namespace {

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
