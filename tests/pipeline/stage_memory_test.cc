#include "pipeline/stage_memory.h"

#include <gtest/gtest.h>

#include <vector>

namespace alpa::pipeline {
namespace {

// `count` stages of 100 static bytes, 10 activation bytes per micro-batch, 5 temporary bytes.
std::vector<StageMemory> EqualStages(int count) {
  return std::vector<StageMemory>(
      count, {.static_bytes = 100, .activation_bytes = 10, .temporary_bytes = 5});
}

TEST(StageMemoryTest, GPipeHoldsEveryMicroBatchOnEveryDevice) {
  // 2 stages x 4 micro-batches: each device runs F0..F3 before B0, so all 4 are in flight:
  // 100 + 4 * 10 + 5 = 145 on both.
  Result<PipelineMemory> memory = PipelinePeakMemory(EqualStages(2), ScheduleKind::kGPipe, 4);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  ASSERT_EQ(memory->devices.size(), 2u);
  for (const DeviceMemory& device : memory->devices) {
    EXPECT_EQ(device.peak_in_flight, 4);
    EXPECT_EQ(device.static_bytes, 100);
    EXPECT_EQ(device.activation_bytes, 40);
    EXPECT_EQ(device.temporary_bytes, 5);
    EXPECT_EQ(device.peak_bytes, 145);
  }
  EXPECT_EQ(memory->required_bytes, 145);
  EXPECT_EQ(memory->bottleneck_device, 0);
}

TEST(StageMemoryTest, OneFOneBHoldsFewerMicroBatches) {
  // 2 stages x 4 micro-batches: device s holds min(B, S - s) = 2 and 1 micro-batches:
  // 100 + 2 * 10 + 5 = 125 and 100 + 10 + 5 = 115. The plan fits in 125 bytes (GPipe: 145).
  Result<PipelineMemory> memory = PipelinePeakMemory(EqualStages(2), ScheduleKind::k1F1B, 4);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(memory->devices[0].peak_in_flight, 2);
  EXPECT_EQ(memory->devices[1].peak_in_flight, 1);
  EXPECT_EQ(memory->devices[0].peak_bytes, 125);
  EXPECT_EQ(memory->devices[1].peak_bytes, 115);
  EXPECT_EQ(memory->required_bytes, 125);
  EXPECT_EQ(memory->bottleneck_device, 0);
}

TEST(StageMemoryTest, OneFOneBWithFewerMicroBatchesThanStages) {
  // 4 stages x 2 micro-batches: min(2, 4 - s) = 2, 2, 2, 1.
  Result<PipelineMemory> memory = PipelinePeakMemory(EqualStages(4), ScheduleKind::k1F1B, 2);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  const int expected[] = {2, 2, 2, 1};
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(memory->devices[s].peak_in_flight, expected[s]) << "device " << s;
    EXPECT_EQ(memory->devices[s].peak_bytes, 100 + expected[s] * 10 + 5) << "device " << s;
  }
  EXPECT_EQ(memory->required_bytes, 125);
}

TEST(StageMemoryTest, TheLargestDeviceSetsTheMemoryThePlanNeeds) {
  // 1F1B, 3 stages x 6 micro-batches; in flight 3, 2, 1. Stage 2 has the most weights:
  //   device 0: 10 + 3 * 20 + 1 = 71
  //   device 1: 10 + 2 * 20 + 1 = 51
  //   device 2: 70 + 1 * 20 + 9 = 99   <- the plan needs 99 bytes per device
  const std::vector<StageMemory> stages = {{10, 20, 1}, {10, 20, 1}, {70, 20, 9}};
  Result<PipelineMemory> memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 6);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(memory->devices[0].peak_bytes, 71);
  EXPECT_EQ(memory->devices[1].peak_bytes, 51);
  EXPECT_EQ(memory->devices[2].peak_bytes, 99);
  EXPECT_EQ(memory->required_bytes, 99);
  EXPECT_EQ(memory->bottleneck_device, 2);
}

TEST(StageMemoryTest, InterleavedSumsChunksStaticAndPeaksAtItsLargestTask) {
  // 2 devices x 2 chunks: device 0 runs virtual stages 0 and 2, device 1 stages 1 and 3. Equal
  // activations per chunk, so the activations held are 10 per micro-batch in flight.
  const std::vector<StageMemory> stages = {{100, 10, 5}, {100, 10, 7}, {50, 10, 9}, {50, 10, 3}};
  Result<PipelineMemory> memory =
      PipelinePeakMemory(stages, ScheduleKind::kInterleaved1F1B, 4, /*num_chunks=*/2);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  ASSERT_EQ(memory->devices.size(), 2u);
  EXPECT_EQ(memory->devices[0].static_bytes, 150);
  EXPECT_EQ(memory->devices[1].static_bytes, 150);
  EXPECT_EQ(memory->devices[0].temporary_bytes, 9);
  EXPECT_EQ(memory->devices[1].temporary_bytes, 7);
  for (const DeviceMemory& device : memory->devices) {
    EXPECT_GT(device.peak_in_flight, 0);
    EXPECT_EQ(device.activation_bytes, 10 * device.peak_in_flight);
    EXPECT_EQ(device.peak_bytes,
              device.static_bytes + device.activation_bytes + device.temporary_bytes);
  }
}

// Where a device keeps the gradients' sums apart from a micro-batch's (our CPU runtime), they
// are held from the end of the stage's first backward. 2 stages x 2 micro-batches under GPipe,
// device 0 runs F0 F1 B0 B1: 100 static bytes of which `sums` are the gradients' sums, 10 per
// micro-batch in flight, 5 temporary:
//   F1 and B0: 100 - sums + 2 * 10 + 5      B1: 100 + 10 + 5 = 115
TEST(StageMemoryTest, GradientSumsAreHeldFromTheStagesFirstBackward) {
  std::vector<StageMemory> stages = EqualStages(2);
  for (StageMemory& stage : stages) stage.gradient_sum_bytes = 30;
  Result<PipelineMemory> memory = PipelinePeakMemory(stages, ScheduleKind::kGPipe, 2);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  const DeviceMemory& late = memory->devices[0];
  EXPECT_EQ(late.peak_bytes, 115);  // at B1, the sums held: 95 before it
  EXPECT_EQ(late.pending_gradient_bytes, 0);
  EXPECT_EQ(late.peak_in_flight, 1);

  for (StageMemory& stage : stages) stage.gradient_sum_bytes = 3;
  memory = PipelinePeakMemory(stages, ScheduleKind::kGPipe, 2);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  const DeviceMemory& early = memory->devices[0];
  EXPECT_EQ(early.peak_bytes, 122);  // at F1, before the sums
  EXPECT_EQ(early.pending_gradient_bytes, 3);
  EXPECT_EQ(early.peak_in_flight, 2);
  EXPECT_EQ(early.peak_bytes, early.static_bytes - early.pending_gradient_bytes +
                                  early.activation_bytes + early.temporary_bytes);
}

TEST(StageMemoryTest, BadInputNamesTheField) {
  std::vector<StageMemory> stages = EqualStages(2);
  stages[1].temporary_bytes = -1;
  Result<PipelineMemory> memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 4);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(memory.status().message().find("stages[1].temporary_bytes"), std::string::npos);
  stages[1].temporary_bytes = 0;
  stages[1].update_temporary_bytes = -1;
  memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 4);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("stages[1].update_temporary_bytes"), std::string::npos);

  stages = EqualStages(2);
  stages[0].activation_bytes = -3;
  memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 4);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("stages[0].activation_bytes"), std::string::npos);

  stages = EqualStages(2);
  stages[1].gradient_sum_bytes = -1;
  memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 4);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("stages[1].gradient_sum_bytes"), std::string::npos);
  stages[1].gradient_sum_bytes = 101;  // more than its static bytes
  memory = PipelinePeakMemory(stages, ScheduleKind::k1F1B, 4);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("stages[1].gradient_sum_bytes"), std::string::npos);

  memory = PipelinePeakMemory(EqualStages(2), ScheduleKind::kGPipe, 0);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace alpa::pipeline
