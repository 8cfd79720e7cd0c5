#include "pipeline/simulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/alpa_formula.h"
#include "test_util.h"

namespace alpa::pipeline {
namespace {

using testing::MakeSpec;
using testing::StageTimes;
using testing::UniformSpec;

struct Span {
  std::string name;
  double start;
  double end;
};

// Device `d`'s tasks as {name, start, end} in the order it ran them.
std::vector<Span> Spans(const SimulationResult& result, int d) {
  std::vector<Span> spans;
  for (const TaskTiming& timing : result.tasks) {
    if (timing.device == d) {
      spans.push_back({TaskName(timing.task, result.num_chunks > 1), timing.start_s, timing.end_s});
    }
  }
  return spans;
}

void ExpectSpans(const SimulationResult& result, int d, const std::vector<Span>& expected) {
  std::vector<Span> actual = Spans(result, d);
  ASSERT_EQ(actual.size(), expected.size()) << "device " << d;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name, expected[i].name) << "device " << d << " task " << i;
    EXPECT_DOUBLE_EQ(actual[i].start, expected[i].start)
        << "device " << d << " " << expected[i].name;
    EXPECT_DOUBLE_EQ(actual[i].end, expected[i].end) << "device " << d << " " << expected[i].name;
  }
}

SimulationResult Simulate(const PipelineSpec& spec) {
  Result<SimulationResult> result = SimulatePipeline(spec);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SimulationResult{};
}

// 2 stages x 4 micro-batches, f = 1, b = 2, no transfers, GPipe.
//   stage 0: F0 0-1  F1 1-2  F2 2-3  F3 3-4                 B0 7-9 B1 9-11 B2 11-13 B3 13-15
//   stage 1:   F0 1-2  F1 2-3  F2 3-4  F3 4-5  B0 5-7 B1 7-9 B2 9-11 B3 11-13
// Step 15 = (S - 1 + B)(f + b); busy 12 per stage, bubble 1 - 24/30 = 0.2.
TEST(SimulatorTest, GPipeTwoStagesFourMicroBatches) {
  PipelineSpec spec = UniformSpec(2, 4, ScheduleKind::kGPipe);
  for (StageSpec& stage : spec.stages) {
    stage.static_bytes = 100;
    stage.activation_bytes = 10;
  }
  SimulationResult result = Simulate(spec);
  ExpectSpans(result, 0,
              {{"F0", 0, 1},
               {"F1", 1, 2},
               {"F2", 2, 3},
               {"F3", 3, 4},
               {"B0", 7, 9},
               {"B1", 9, 11},
               {"B2", 11, 13},
               {"B3", 13, 15}});
  ExpectSpans(result, 1,
              {{"F0", 1, 2},
               {"F1", 2, 3},
               {"F2", 3, 4},
               {"F3", 4, 5},
               {"B0", 5, 7},
               {"B1", 7, 9},
               {"B2", 9, 11},
               {"B3", 11, 13}});
  EXPECT_DOUBLE_EQ(result.step_time_s, 15);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.2);
  EXPECT_DOUBLE_EQ(result.critical_path_s, 6);
  ASSERT_EQ(result.devices.size(), 2u);
  for (const DeviceStats& device : result.devices) {
    EXPECT_DOUBLE_EQ(device.busy_s, 12);
    EXPECT_EQ(device.peak_in_flight, 4);  // all four micro-batches before the first backward
    EXPECT_EQ(device.peak_bytes, 100 + 4 * 10);
  }
}

// The same pipeline under 1F1B (stage 0: F0 F1 B0 F2 B1 F3 B2 B3; stage 1: F0 B0 F1 B1 ...).
//   stage 0: F0 0-1  F1 1-2  B0 4-6  F2 6-7  B1 7-9  F3 9-10  B2 10-12  B3 13-15
//   stage 1: F0 1-2  B0 2-4  F1 4-5  B1 5-7  F2 7-8  B2 8-10  F3 10-11  B3 11-13
// Same step time 15, but at most 2 (stage 0) and 1 (stage 1) micro-batches in flight.
TEST(SimulatorTest, OneFOneBTwoStagesFourMicroBatches) {
  PipelineSpec spec = UniformSpec(2, 4, ScheduleKind::k1F1B);
  for (StageSpec& stage : spec.stages) {
    stage.static_bytes = 100;
    stage.activation_bytes = 10;
  }
  SimulationResult result = Simulate(spec);
  ExpectSpans(result, 0,
              {{"F0", 0, 1},
               {"F1", 1, 2},
               {"B0", 4, 6},
               {"F2", 6, 7},
               {"B1", 7, 9},
               {"F3", 9, 10},
               {"B2", 10, 12},
               {"B3", 13, 15}});
  ExpectSpans(result, 1,
              {{"F0", 1, 2},
               {"B0", 2, 4},
               {"F1", 4, 5},
               {"B1", 5, 7},
               {"F2", 7, 8},
               {"B2", 8, 10},
               {"F3", 10, 11},
               {"B3", 11, 13}});
  EXPECT_DOUBLE_EQ(result.step_time_s, 15);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.2);
  EXPECT_EQ(result.devices[0].peak_in_flight, 2);
  EXPECT_EQ(result.devices[1].peak_in_flight, 1);
  EXPECT_EQ(result.devices[0].peak_bytes, 120);
  EXPECT_EQ(result.devices[1].peak_bytes, 110);
}

// 4 stages x 2 micro-batches (B < S), f = 1, b = 2, GPipe:
//   stage s: F0 s-(s+1), F1 (s+1)-(s+2); stage 3: B0 5-7 B1 7-9; stage 2: B0 7-9 B1 9-11;
//   stage 1: B0 9-11 B1 11-13; stage 0: B0 11-13 B1 13-15.
// Step 15; with equal stages Alpa's formula 4·3 + (2-1)·3 = 15 is exact even though B < S.
// 1F1B (stages 0-2 run F0 F1 B0 B1, stage 3 runs F0 B0 F1 B1) has the same step time:
//   s0 F0 0-1 F1 1-2; s1 F0 1-2 F1 2-3; s2 F0 2-3 F1 3-4; s3 F0 3-4 B0 4-6 F1 6-7 B1 7-9;
//   s2 B0 6-8 B1 9-11; s1 B0 8-10 B1 11-13; s0 B0 10-12 B1 13-15.
TEST(SimulatorTest, FourStagesTwoMicroBatches) {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::k1F1B}) {
    PipelineSpec spec = UniformSpec(4, 2, kind);
    SimulationResult result = Simulate(spec);
    EXPECT_DOUBLE_EQ(result.step_time_s, 15) << ScheduleKindName(kind);
    EXPECT_DOUBLE_EQ(AlpaPipelineLatency(StageTimes(spec), 2), 15);
    EXPECT_DOUBLE_EQ(result.critical_path_s, 12);
    EXPECT_DOUBLE_EQ(result.bubble_fraction, 1.0 - 4 * 6.0 / (4 * 15.0));
    if (kind == ScheduleKind::kGPipe) {
      ExpectSpans(result, 3, {{"F0", 3, 4}, {"F1", 4, 5}, {"B0", 5, 7}, {"B1", 7, 9}});
      ExpectSpans(result, 0, {{"F0", 0, 1}, {"F1", 1, 2}, {"B0", 11, 13}, {"B1", 13, 15}});
    } else {
      ExpectSpans(result, 3, {{"F0", 3, 4}, {"B0", 4, 6}, {"F1", 6, 7}, {"B1", 7, 9}});
      ExpectSpans(result, 2, {{"F0", 2, 3}, {"F1", 3, 4}, {"B0", 6, 8}, {"B1", 9, 11}});
      ExpectSpans(result, 0, {{"F0", 0, 1}, {"F1", 1, 2}, {"B0", 10, 12}, {"B1", 13, 15}});
    }
  }
}

// 4 stages x 2 micro-batches with a heavy first stage (f, b) = (2, 4), the rest (1, 2).
// Alpa's formula: (6 + 3 + 3 + 3) + (2 - 1)·6 = 21.
// GPipe:  s0 F0 0-2 F1 2-4; s1 F0 2-3 F1 4-5; s2 F0 3-4 F1 5-6; s3 F0 4-5 F1 6-7 B0 7-9 B1 9-11;
//         s2 B0 9-11 B1 11-13; s1 B0 11-13 B1 13-15; s0 B0 13-17 B1 17-21.       Step 21.
// 1F1B:   s3 runs F0 B0 F1 B1: F0 4-5 B0 5-7 F1 7-8 B1 8-10; s2 B0 7-9 B1 10-12;
//         s1 B0 9-11 B1 12-14; s0 B0 11-15 B1 15-19.                            Step 19.
// The formula is exact for GPipe here but 2 s (10%) too high for 1F1B, with B < S.
TEST(SimulatorTest, AlpaFormulaOverestimates1F1BWithFewMicroBatchesAndUnequalStages) {
  const std::vector<std::pair<double, double>> stages = {{2, 4}, {1, 2}, {1, 2}, {1, 2}};
  PipelineSpec gpipe = MakeSpec(stages, 2, ScheduleKind::kGPipe);
  PipelineSpec one_f_one_b = MakeSpec(stages, 2, ScheduleKind::k1F1B);
  EXPECT_DOUBLE_EQ(AlpaPipelineLatency(StageTimes(gpipe), 2), 21);
  SimulationResult gpipe_result = Simulate(gpipe);
  SimulationResult result = Simulate(one_f_one_b);
  EXPECT_DOUBLE_EQ(gpipe_result.step_time_s, 21);
  ExpectSpans(gpipe_result, 0, {{"F0", 0, 2}, {"F1", 2, 4}, {"B0", 13, 17}, {"B1", 17, 21}});
  EXPECT_DOUBLE_EQ(result.step_time_s, 19);
  ExpectSpans(result, 3, {{"F0", 4, 5}, {"B0", 5, 7}, {"F1", 7, 8}, {"B1", 8, 10}});
  ExpectSpans(result, 0, {{"F0", 0, 2}, {"F1", 2, 4}, {"B0", 11, 15}, {"B1", 15, 19}});

  // 3 stages x 2 micro-batches, heavy middle stage: formula 12 + 6 = 18; GPipe 18, 1F1B 16.
  const std::vector<std::pair<double, double>> middle = {{1, 2}, {2, 4}, {1, 2}};
  EXPECT_DOUBLE_EQ(AlpaPipelineLatency(StageTimes(MakeSpec(middle, 2, ScheduleKind::kGPipe)), 2),
                   18);
  EXPECT_DOUBLE_EQ(Simulate(MakeSpec(middle, 2, ScheduleKind::kGPipe)).step_time_s, 18);
  EXPECT_DOUBLE_EQ(Simulate(MakeSpec(middle, 2, ScheduleKind::k1F1B)).step_time_s, 16);
}

// Forward/backward skew: stage 0 (f, b) = (1, 3), stage 1 (3, 1), B = 4. t_i = 4 for both, so
// Alpa's formula says 8 + 3·4 = 20.
// GPipe: s0 F 0-1 1-2 2-3 3-4; s1 F0 1-4 F1 4-7 F2 7-10 F3 10-13 B0 13-14 B1 14-15 B2 15-16
//        B3 16-17; s0 B0 14-17 B1 17-20 B2 20-23 B3 23-26.     Step 26: the formula is 23% low.
// 1F1B keeps stage 0's backwards interleaved with its forwards and reaches 20 (exact).
TEST(SimulatorTest, AlpaFormulaUnderestimatesGPipeWithForwardBackwardSkew) {
  const std::vector<std::pair<double, double>> stages = {{1, 3}, {3, 1}};
  PipelineSpec gpipe = MakeSpec(stages, 4, ScheduleKind::kGPipe);
  EXPECT_DOUBLE_EQ(AlpaPipelineLatency(StageTimes(gpipe), 4), 20);
  SimulationResult result = Simulate(gpipe);
  EXPECT_DOUBLE_EQ(result.step_time_s, 26);
  ExpectSpans(result, 0,
              {{"F0", 0, 1},
               {"F1", 1, 2},
               {"F2", 2, 3},
               {"F3", 3, 4},
               {"B0", 14, 17},
               {"B1", 17, 20},
               {"B2", 20, 23},
               {"B3", 23, 26}});
  EXPECT_DOUBLE_EQ(Simulate(MakeSpec(stages, 4, ScheduleKind::k1F1B)).step_time_s, 20);
}

// Equal stages, no transfers: the formula (S + B - 1)·(f + b) is exact for any B, both schedules.
TEST(SimulatorTest, AlpaFormulaIsExactForEqualStagesWithoutTransfers) {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::k1F1B}) {
    for (int stages = 1; stages <= 6; ++stages) {
      for (int micro_batches = 1; micro_batches <= 10; ++micro_batches) {
        PipelineSpec spec = UniformSpec(stages, micro_batches, kind);
        EXPECT_DOUBLE_EQ(Simulate(spec).step_time_s,
                         AlpaPipelineLatency(StageTimes(spec), micro_batches))
            << ScheduleKindName(kind) << " S " << stages << " B " << micro_batches;
      }
    }
  }
}

// 2 x 4, f = 1, b = 2, transfers of 0.5 each way (the formula ignores them: 15).
// GPipe: s0 F 0-1 1-2 2-3 3-4; s1 F0 1.5-2.5 ... F3 4.5-5.5, B0 5.5-7.5 ... B3 11.5-13.5;
//        s0 B0 8-10 B1 10-12 B2 12-14 B3 14-16.                                   Step 16.
// 1F1B:  s0 F0 0-1 F1 1-2 B0 5-7 F2 7-8 B1 8-10 F3 10-11 B2 12-14 B3 15-17;
//        s1 F0 1.5-2.5 B0 2.5-4.5 F1 4.5-5.5 B1 5.5-7.5 F2 8.5-9.5 B2 9.5-11.5
//        F3 11.5-12.5 B3 12.5-14.5.                                                Step 17.
// 1F1B is slower here: alternating exposes each transfer's latency on the critical chain.
TEST(SimulatorTest, TransfersDelayDependentTasks) {
  PipelineSpec gpipe = UniformSpec(2, 4, ScheduleKind::kGPipe);
  gpipe.forward_transfer_s = {0.5};
  gpipe.backward_transfer_s = {0.5};
  PipelineSpec one_f_one_b = gpipe;
  one_f_one_b.schedule = ScheduleKind::k1F1B;

  SimulationResult result = Simulate(gpipe);
  EXPECT_DOUBLE_EQ(result.step_time_s, 16);
  EXPECT_DOUBLE_EQ(result.critical_path_s, 7);
  ExpectSpans(result, 0,
              {{"F0", 0, 1},
               {"F1", 1, 2},
               {"F2", 2, 3},
               {"F3", 3, 4},
               {"B0", 8, 10},
               {"B1", 10, 12},
               {"B2", 12, 14},
               {"B3", 14, 16}});

  result = Simulate(one_f_one_b);
  EXPECT_DOUBLE_EQ(result.step_time_s, 17);
  ExpectSpans(result, 0,
              {{"F0", 0, 1},
               {"F1", 1, 2},
               {"B0", 5, 7},
               {"F2", 7, 8},
               {"B1", 8, 10},
               {"F3", 10, 11},
               {"B2", 12, 14},
               {"B3", 15, 17}});
  ExpectSpans(result, 1,
              {{"F0", 1.5, 2.5},
               {"B0", 2.5, 4.5},
               {"F1", 4.5, 5.5},
               {"B1", 5.5, 7.5},
               {"F2", 8.5, 9.5},
               {"B2", 9.5, 11.5},
               {"F3", 11.5, 12.5},
               {"B3", 12.5, 14.5}});
  EXPECT_GT(result.step_time_s, AlpaPipelineLatency(StageTimes(one_f_one_b), 4));
}

// One stage, per-micro-batch forward times 1, 2, 3 and backward 1: GPipe runs F0 0-1 F1 1-3
// F2 3-6 B0 6-7 B1 7-8 B2 8-9; no bubble.
TEST(SimulatorTest, PerMicroBatchTimes) {
  PipelineSpec spec = UniformSpec(1, 3, ScheduleKind::kGPipe);
  spec.stages[0].forward_per_micro_batch_s = {1, 2, 3};
  spec.stages[0].backward_per_micro_batch_s = {1, 1, 1};
  SimulationResult result = Simulate(spec);
  ExpectSpans(result, 0,
              {{"F0", 0, 1}, {"F1", 1, 3}, {"F2", 3, 6}, {"B0", 6, 7}, {"B1", 7, 8}, {"B2", 8, 9}});
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0);
  EXPECT_DOUBLE_EQ(result.critical_path_s, 4);  // micro-batch 2: 3 + 1
}

// Interleaved 1F1B, S = 2 devices, v = 2 chunks (4 virtual stages of f = 0.5, b = 1), B = 4:
// Megatron's step time is (B + (S - 1)/v)·v·(f + b) = (4 + 0.5)·3 = 13.5, against 1F1B's
// (4 + 1)·3 = 15 for the same model on 2 stages of (1, 2).
TEST(SimulatorTest, InterleavedShrinksTheBubble) {
  PipelineSpec spec =
      MakeSpec({{0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 1}}, 4, ScheduleKind::kInterleaved1F1B);
  spec.num_chunks = 2;
  for (StageSpec& stage : spec.stages) {
    stage.static_bytes = 50;
    stage.activation_bytes = 5;
  }
  SimulationResult result = Simulate(spec);
  EXPECT_DOUBLE_EQ(result.step_time_s, 13.5);
  EXPECT_EQ(result.num_devices, 2);
  EXPECT_EQ(result.devices[0].static_bytes, 100);
  // Device 0 holds F0.0 F1.0 F0.1 F1.1 F2.0 before its first backward ends: 5 chunk-micro-batches.
  EXPECT_EQ(result.devices[0].peak_in_flight, 5);
  EXPECT_EQ(result.devices[0].peak_bytes, 100 + 5 * 5);
  EXPECT_DOUBLE_EQ(Simulate(UniformSpec(2, 4, ScheduleKind::k1F1B)).step_time_s, 15);

  // S = 4, v = 2, B = 8: (8 + 3/2)·3 = 28.5 vs 1F1B's 33.
  PipelineSpec big = MakeSpec(std::vector<std::pair<double, double>>(8, {0.5, 1}), 8,
                              ScheduleKind::kInterleaved1F1B);
  big.num_chunks = 2;
  EXPECT_DOUBLE_EQ(Simulate(big).step_time_s, 28.5);
  EXPECT_DOUBLE_EQ(Simulate(UniformSpec(4, 8, ScheduleKind::k1F1B)).step_time_s, 33);
}

TEST(SimulatorTest, DetectsADeadlockingSchedule) {
  PipelineSpec spec = UniformSpec(1, 1, ScheduleKind::kGPipe);
  Result<Schedule> schedule = MakeSchedule(ScheduleKind::kGPipe, 1, 1);
  ASSERT_TRUE(schedule.ok());
  std::swap(schedule->device_tasks[0][0], schedule->device_tasks[0][1]);  // B0 before F0
  Result<SimulationResult> result = SimulateSchedule(spec, *schedule);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("deadlock"), std::string::npos);
}

// Each bad spec fails with INVALID_ARGUMENT naming the field.
TEST(SimulatorTest, RejectsBadSpecsNamingTheField) {
  auto expect_error = [](const PipelineSpec& spec, const std::string& field) {
    Result<SimulationResult> result = SimulatePipeline(spec);
    ASSERT_FALSE(result.ok()) << field;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << field;
    EXPECT_NE(result.status().message().find(field), std::string::npos)
        << result.status().message();
  };
  PipelineSpec good = UniformSpec(3, 4, ScheduleKind::k1F1B);
  ASSERT_TRUE(SimulatePipeline(good).ok());

  PipelineSpec spec = good;
  spec.num_micro_batches = 0;
  expect_error(spec, "num_micro_batches");
  spec = good;
  spec.stages.clear();
  expect_error(spec, "stages is empty");
  spec = good;
  spec.stages[1].forward_s = -1;
  expect_error(spec, "stages[1].forward_s");
  spec = good;
  spec.stages[2].backward_s = std::nan("");
  expect_error(spec, "stages[2].backward_s");
  spec = good;
  spec.forward_transfer_s = {0.1};
  expect_error(spec, "forward_transfer_s");
  spec = good;
  spec.backward_transfer_s = {0.1, -0.1};
  expect_error(spec, "backward_transfer_s[1]");
  spec = good;
  spec.stages[0].forward_per_micro_batch_s = {1, 1};
  expect_error(spec, "stages[0].forward_per_micro_batch_s");
  spec = good;
  spec.stages[0].activation_bytes = -5;
  expect_error(spec, "stages[0].activation_bytes");
  spec = good;
  spec.stages[0].static_bytes = -5;
  expect_error(spec, "stages[0].static_bytes");
  spec = good;
  spec.num_chunks = 2;
  expect_error(spec, "num_chunks");
  spec = UniformSpec(4, 3, ScheduleKind::kInterleaved1F1B);
  spec.num_chunks = 2;
  expect_error(spec, "num_micro_batches");
}

}  // namespace
}  // namespace alpa::pipeline
