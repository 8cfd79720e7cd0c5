// Properties of the simulator on seeded random pipelines: no schedule beats the critical path or
// the busiest device, the bubble fraction is in [0, 1), dependencies and device exclusivity hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "pipeline/simulator.h"

namespace alpa::pipeline {
namespace {

constexpr double kEps = 1e-9;

PipelineSpec RandomSpec(std::mt19937& rng, ScheduleKind kind) {
  std::uniform_int_distribution<int> devices_dist(1, 6);
  std::uniform_int_distribution<int> chunks_dist(1, 3);
  std::uniform_int_distribution<int> micro_batch_dist(1, 12);
  std::uniform_real_distribution<double> time_dist(0.1, 3.0);
  std::uniform_real_distribution<double> transfer_dist(0.0, 1.0);
  std::bernoulli_distribution coin(0.5);

  PipelineSpec spec;
  spec.schedule = kind;
  const int devices = devices_dist(rng);
  spec.num_chunks = kind == ScheduleKind::kInterleaved1F1B ? chunks_dist(rng) : 1;
  spec.num_micro_batches = micro_batch_dist(rng);
  if (spec.num_chunks > 1) {  // Megatron's interleaving needs B to be a multiple of S
    spec.num_micro_batches = devices * std::uniform_int_distribution<int>(1, 3)(rng);
  }
  const bool per_micro_batch = coin(rng);
  const int stages = devices * spec.num_chunks;
  for (int j = 0; j < stages; ++j) {
    StageSpec stage;
    stage.forward_s = time_dist(rng);
    stage.backward_s = time_dist(rng);
    if (per_micro_batch) {
      for (int m = 0; m < spec.num_micro_batches; ++m) {
        stage.forward_per_micro_batch_s.push_back(time_dist(rng));
        stage.backward_per_micro_batch_s.push_back(time_dist(rng));
      }
    }
    stage.static_bytes = 1000;
    stage.activation_bytes = 10;
    spec.stages.push_back(stage);
  }
  if (coin(rng)) {
    for (int j = 0; j + 1 < stages; ++j) {
      spec.forward_transfer_s.push_back(transfer_dist(rng));
      spec.backward_transfer_s.push_back(transfer_dist(rng));
    }
  }
  return spec;
}

TEST(SimulatorPropertyTest, StepTimeIsNeverBelowTheLowerBounds) {
  std::mt19937 rng(20240607);
  for (ScheduleKind kind :
       {ScheduleKind::kGPipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B}) {
    for (int trial = 0; trial < 300; ++trial) {
      PipelineSpec spec = RandomSpec(rng, kind);
      Result<SimulationResult> result = SimulatePipeline(spec);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      const SimulationResult& r = *result;
      SCOPED_TRACE(testing::Message()
                   << ScheduleKindName(kind) << " trial " << trial << " S " << r.num_devices
                   << " v " << r.num_chunks << " B " << r.num_micro_batches);

      EXPECT_GE(r.step_time_s, r.critical_path_s - kEps);
      EXPECT_DOUBLE_EQ(r.critical_path_s, CriticalPath(spec));
      double busiest = 0;
      for (const DeviceStats& device : r.devices) busiest = std::max(busiest, device.busy_s);
      EXPECT_GE(r.step_time_s, busiest - kEps);
      EXPECT_GE(r.bubble_fraction, -kEps);
      EXPECT_LT(r.bubble_fraction, 1.0);
      ASSERT_EQ(static_cast<int>(r.tasks.size()),
                2 * static_cast<int>(spec.stages.size()) * spec.num_micro_batches);

      // Dependencies: F(j, m) after F(j-1, m) + transfer; B(j, m) after B(j+1, m) + transfer
      // and after F(j, m). Device exclusivity: a device's tasks do not overlap.
      std::map<std::tuple<int, int, int>, const TaskTiming*> by_key;
      for (const TaskTiming& timing : r.tasks) {
        by_key[{static_cast<int>(timing.task.kind), timing.stage, timing.task.micro_batch}] =
            &timing;
      }
      const int last = static_cast<int>(spec.stages.size()) - 1;
      auto transfer = [](const std::vector<double>& t, int j) { return t.empty() ? 0.0 : t[j]; };
      for (const TaskTiming& timing : r.tasks) {
        const int j = timing.stage;
        const int m = timing.task.micro_batch;
        if (timing.task.kind == TaskKind::kForward && j > 0) {
          const TaskTiming* prev = by_key.at({0, j - 1, m});
          EXPECT_GE(timing.start_s, prev->end_s + transfer(spec.forward_transfer_s, j - 1) - kEps);
        }
        if (timing.task.kind == TaskKind::kBackward) {
          EXPECT_GE(timing.start_s, by_key.at({0, j, m})->end_s - kEps);
          if (j < last) {
            const TaskTiming* next = by_key.at({1, j + 1, m});
            EXPECT_GE(timing.start_s, next->end_s + transfer(spec.backward_transfer_s, j) - kEps);
          }
        }
      }
      for (size_t i = 1; i < r.tasks.size(); ++i) {
        if (r.tasks[i].device == r.tasks[i - 1].device) {
          EXPECT_GE(r.tasks[i].start_s, r.tasks[i - 1].end_s - kEps);
        }
      }
      for (const DeviceStats& device : r.devices) {
        EXPECT_GE(device.peak_in_flight, 1);
        EXPECT_LE(device.peak_in_flight, spec.num_micro_batches * spec.num_chunks);
        EXPECT_EQ(device.peak_bytes, device.static_bytes + 10 * device.peak_in_flight);
      }
    }
  }
}

// 1F1B never holds more micro-batches than GPipe, and on stage s at most min(S - s, B).
TEST(SimulatorPropertyTest, OneFOneBBoundsInFlightMicroBatches) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    PipelineSpec spec = RandomSpec(rng, ScheduleKind::k1F1B);
    Result<SimulationResult> result = SimulatePipeline(spec);
    ASSERT_TRUE(result.ok());
    const int devices = result->num_devices;
    for (int s = 0; s < devices; ++s) {
      EXPECT_EQ(result->devices[s].peak_in_flight, std::min(devices - s, spec.num_micro_batches));
    }
  }
}

}  // namespace
}  // namespace alpa::pipeline
