#include "pipeline/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace alpa::pipeline {
namespace {

// Device `d`'s tasks as "F0 F1 B0 ..." ("F0.1" with chunks).
std::string Order(const Schedule& schedule, int d) {
  std::string out;
  for (const Task& task : schedule.device_tasks[d]) {
    if (!out.empty()) out += ' ';
    out += TaskName(task, schedule.num_chunks > 1);
  }
  return out;
}

int WarmupForwards(const std::vector<Task>& tasks) {
  auto first_backward = std::find_if(tasks.begin(), tasks.end(), [](const Task& task) {
    return task.kind == TaskKind::kBackward;
  });
  return static_cast<int>(first_backward - tasks.begin());
}

TEST(ScheduleTest, GPipeRunsAllForwardsThenBackwardsInAscendingOrder) {
  Result<Schedule> schedule = MakeSchedule(ScheduleKind::kGPipe, 2, 4);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  EXPECT_EQ(Order(*schedule, 0), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(Order(*schedule, 1), "F0 F1 F2 F3 B0 B1 B2 B3");
}

TEST(ScheduleTest, OneFOneBWarmsUpWithMinOfStagesLeftAndMicroBatches) {
  Result<Schedule> schedule = MakeSchedule(ScheduleKind::k1F1B, 2, 4);
  ASSERT_TRUE(schedule.ok());
  // Stage 0: min(2 - 0, 4) = 2 warm-up forwards; stage 1: min(2 - 1, 4) = 1.
  EXPECT_EQ(Order(*schedule, 0), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(Order(*schedule, 1), "F0 B0 F1 B1 F2 B2 F3 B3");

  // Fewer micro-batches than stages: the warm-up is capped at B.
  Result<Schedule> short_schedule = MakeSchedule(ScheduleKind::k1F1B, 4, 2);
  ASSERT_TRUE(short_schedule.ok());
  std::vector<int> warmups;
  for (const auto& tasks : short_schedule->device_tasks) warmups.push_back(WarmupForwards(tasks));
  EXPECT_EQ(warmups, (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(Order(*short_schedule, 0), "F0 F1 B0 B1");
  EXPECT_EQ(Order(*short_schedule, 3), "F0 B0 F1 B1");

  Result<Schedule> long_schedule = MakeSchedule(ScheduleKind::k1F1B, 4, 8);
  ASSERT_TRUE(long_schedule.ok());
  warmups.clear();
  for (const auto& tasks : long_schedule->device_tasks) warmups.push_back(WarmupForwards(tasks));
  EXPECT_EQ(warmups, (std::vector<int>{4, 3, 2, 1}));
}

TEST(ScheduleTest, InterleavedFollowsMegatronOrder) {
  // S = 2, v = 2, B = 4: forwards in groups of S: F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F2.1 F3.1;
  // backwards the same with the chunk reversed. Warm-up: device 0 (2-0-1)·2 + (2-1)·2 = 4,
  // device 1 (2-1-1)·2 + 2 = 2; then forward k+warm-up, backward k; then the cool-down.
  Result<Schedule> schedule = MakeSchedule(ScheduleKind::kInterleaved1F1B, 2, 4, 2);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  EXPECT_EQ(Order(*schedule, 0),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(Order(*schedule, 1),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0");
}

TEST(ScheduleTest, InterleavedWithOneChunkIs1F1B) {
  Result<Schedule> interleaved = MakeSchedule(ScheduleKind::kInterleaved1F1B, 3, 5, 1);
  Result<Schedule> one_f_one_b = MakeSchedule(ScheduleKind::k1F1B, 3, 5);
  ASSERT_TRUE(interleaved.ok());
  ASSERT_TRUE(one_f_one_b.ok());
  EXPECT_EQ(interleaved->device_tasks, one_f_one_b->device_tasks);
}

TEST(ScheduleTest, EveryScheduleListsEachTaskOnce) {
  for (ScheduleKind kind :
       {ScheduleKind::kGPipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B}) {
    for (int devices = 1; devices <= 5; ++devices) {
      for (int micro_batches = 1; micro_batches <= 12; ++micro_batches) {
        const int chunks = kind == ScheduleKind::kInterleaved1F1B ? 2 : 1;
        if (chunks > 1 && micro_batches % devices != 0) continue;
        Result<Schedule> schedule = MakeSchedule(kind, devices, micro_batches, chunks);
        ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
        for (const auto& tasks : schedule->device_tasks) {
          std::set<std::tuple<int, int, int>> seen;
          for (const Task& task : tasks) {
            seen.insert({static_cast<int>(task.kind), task.micro_batch, task.chunk});
          }
          EXPECT_EQ(seen.size(), tasks.size());
          EXPECT_EQ(static_cast<int>(tasks.size()), 2 * micro_batches * chunks);
        }
      }
    }
  }
}

TEST(ScheduleTest, RejectsBadArgumentsNamingTheField) {
  auto message = [](Result<Schedule> result) {
    EXPECT_FALSE(result.ok());
    return result.status().message();
  };
  EXPECT_NE(message(MakeSchedule(ScheduleKind::kGPipe, 0, 4)).find("num_devices"),
            std::string::npos);
  EXPECT_NE(message(MakeSchedule(ScheduleKind::kGPipe, 2, 0)).find("num_micro_batches"),
            std::string::npos);
  EXPECT_NE(message(MakeSchedule(ScheduleKind::k1F1B, 2, 4, 2)).find("num_chunks"),
            std::string::npos);
  EXPECT_NE(message(MakeSchedule(ScheduleKind::kInterleaved1F1B, 4, 6, 2)).find("multiple"),
            std::string::npos);
}

TEST(ScheduleTest, NamesRoundTrip) {
  for (ScheduleKind kind :
       {ScheduleKind::kGPipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B}) {
    Result<ScheduleKind> parsed = ParseScheduleKind(ScheduleKindName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(ParseScheduleKind("zero-bubble").ok());
}

}  // namespace
}  // namespace alpa::pipeline
