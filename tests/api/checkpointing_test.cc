// Checkpoints of runs on in-process devices: saved by one plan, restored into another's layout
// bit for bit, each device reading its own tiles' bytes alone; training resumed on the same plan
// takes the uninterrupted run's steps exactly.
#include "api/checkpointing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "api/array_file.h"
#include "api/parallelize.h"
#include "cluster/presets.h"
#include "tests/api/zoo_step.h"

namespace alpa::api {
namespace {

namespace fs = std::filesystem;
using sharding::ParallelMethod;
using testing::AppendBatch;
using testing::BuildStep;
using testing::FirstArguments;
using ::testing::HasSubstr;
using testing::ZooStep;

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("api_" + name);
  fs::remove_all(dir);
  return dir.string();
}

ParallelExecutable Plan(const ZooStep& step, const std::string& cluster_text, ParallelMethod method,
                        std::vector<int64_t> mesh = {}) {
  Result<TrainStep> described = DescribeTrainStep(*step.module, step.layout);
  EXPECT_TRUE(described.ok()) << described.status().message();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument(cluster_text);
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  ParallelizeOptions options;
  options.method = method;
  options.mesh_shape = std::move(mesh);
  Result<ParallelExecutable> executable = Parallelize(*described, *cluster, options);
  EXPECT_TRUE(executable.ok()) << executable.status().message();
  return std::move(executable).value();
}

// Runs steps [first, last) of `step` on `state`; returns the losses.
std::vector<ir::Literal> Train(const ZooStep& step, ParallelExecutable& executable,
                               DeviceState& state, int64_t first, int64_t last) {
  std::vector<ir::Literal> losses;
  for (int64_t index = first; index < last; ++index) {
    std::vector<ir::Literal> batch;
    AppendBatch(step, index, batch);
    Result<std::vector<ir::Literal>> loss = executable.Step(state, batch);
    EXPECT_TRUE(loss.ok()) << loss.status().message();
    losses.push_back(std::move((*loss)[0]));
  }
  return losses;
}

// gpt-tiny trained 2 steps under ZeRO-3 on 4 devices (every weight and its state split), then
// saved: restored into each other plan, the values fetched whole are the saved ones bit for bit,
// and each device read exactly the bytes of its own tiles.
TEST(CheckpointingTest, AnotherPlanRestoresTheSavedValuesReadingOnlyItsTiles) {
  const ZooStep step = BuildStep("gpt-tiny");
  ParallelExecutable zero3 = Plan(step, "local:4", ParallelMethod::kZero3);
  Result<DeviceState> state = zero3.Place(FirstArguments(step));
  ASSERT_TRUE(state.ok()) << state.status().message();
  Train(step, zero3, *state, 0, 2);
  const std::string root = FreshDir("plans");
  ASSERT_TRUE(SaveCheckpoint(CarriedLayoutOf(zero3), state->first_device(), state->tiles(),
                             {.root = root, .model = "gpt-tiny", .method = "zero3", .step = 2})
                  .ok());
  Result<std::vector<ir::Literal>> saved = zero3.Fetch(*state);
  ASSERT_TRUE(saved.ok());

  struct Target {
    std::string cluster;
    ParallelMethod method;
    std::vector<int64_t> mesh;
  };
  for (const Target& target :
       {Target{"local:4", ParallelMethod::kZero3, {}}, Target{"local:2", ParallelMethod::kData, {}},
        Target{"local:4", ParallelMethod::kShard, {2, 2}},
        Target{"local:4", ParallelMethod::kShard, {4, 1}},
        Target{"local:1", ParallelMethod::kData, {}}}) {
    SCOPED_TRACE(target.cluster + " " + std::string(sharding::ParallelMethodName(target.method)));
    ParallelExecutable executable = Plan(step, target.cluster, target.method, target.mesh);
    Result<RestoredState> restored =
        RestoreCheckpoint(CarriedLayoutOf(executable), root, "gpt-tiny");
    ASSERT_TRUE(restored.ok()) << restored.status().message();
    EXPECT_EQ(restored->step, 2);
    EXPECT_EQ(restored->method, "zero3");
    for (size_t d = 0; d < restored->tiles.size(); ++d) {
      int64_t tile_bytes = 0;
      for (const ir::Literal& tile : restored->tiles[d]) tile_bytes += tile.size_bytes();
      EXPECT_EQ(restored->bytes_read[d], tile_bytes) << "device " << d;
    }
    Result<DeviceState> adopted = executable.Adopt(std::move(restored->tiles));
    ASSERT_TRUE(adopted.ok()) << adopted.status().message();
    Result<std::vector<ir::Literal>> fetched = executable.Fetch(*adopted);
    ASSERT_TRUE(fetched.ok());
    ASSERT_EQ(fetched->size(), saved->size());
    for (size_t i = 0; i < saved->size(); ++i) {
      EXPECT_EQ((*fetched)[i], (*saved)[i]) << executable.carried_values()[i].name;
    }
  }
}

TEST(CheckpointingTest, TheSamePlanResumedTakesTheUninterruptedStepsBitForBit) {
  const ZooStep step = BuildStep("moe-tiny");
  ParallelExecutable executable = Plan(step, "local:4", ParallelMethod::kShard, {2, 2});
  Result<DeviceState> state = executable.Place(FirstArguments(step));
  ASSERT_TRUE(state.ok()) << state.status().message();
  Train(step, executable, *state, 0, 2);
  const std::string root = FreshDir("resume");
  ASSERT_TRUE(SaveCheckpoint(CarriedLayoutOf(executable), 0, state->tiles(),
                             {.root = root, .model = "moe-tiny", .method = "shard", .step = 2})
                  .ok());
  const std::vector<ir::Literal> uninterrupted = Train(step, executable, *state, 2, 4);

  Result<RestoredState> restored = RestoreCheckpoint(CarriedLayoutOf(executable), root, "moe-tiny");
  ASSERT_TRUE(restored.ok()) << restored.status().message();
  Result<DeviceState> resumed = executable.Adopt(std::move(restored->tiles));
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(Train(step, executable, *resumed, 2, 4), uninterrupted);
}

TEST(CheckpointingTest, AnotherModelsCheckpointIsNamedAndTheTilesAreSafetensors) {
  const ZooStep gpt = BuildStep("gpt-tiny");
  ParallelExecutable data = Plan(gpt, "local:2", ParallelMethod::kData);
  Result<DeviceState> state = data.Place(FirstArguments(gpt));
  ASSERT_TRUE(state.ok());
  const std::string root = FreshDir("models");
  ASSERT_TRUE(SaveCheckpoint(CarriedLayoutOf(data), 0, state->tiles(),
                             {.root = root, .model = "gpt-tiny", .method = "data", .step = 0})
                  .ok());

  const ZooStep mlp = BuildStep("mlp-tiny");
  Result<RestoredState> other = RestoreCheckpoint(
      CarriedLayoutOf(Plan(mlp, "local:2", ParallelMethod::kData)), root, "mlp-tiny");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("a checkpoint of gpt-tiny (fingerprint "));
  EXPECT_THAT(other.status().message(), HasSubstr("not of this run's mlp-tiny"));

  // Replicated values are saved once, by device 0: any safetensors reader opens its file.
  Result<std::vector<NamedArray>> arrays =
      ReadArrayFile(root + "/ckpt-000001-step-0/device-0000.safetensors");
  ASSERT_TRUE(arrays.ok()) << arrays.status().message();
  const std::vector<ParallelExecutable::CarriedValue> values = data.carried_values();
  ASSERT_EQ(arrays->size(), values.size());
  const auto wte = std::find_if(arrays->begin(), arrays->end(), [&](const NamedArray& array) {
    return array.name == values[0].name;
  });
  ASSERT_NE(wte, arrays->end()) << values[0].name;
  EXPECT_EQ(wte->value.shape().dims(), values[0].shape.dims());
  EXPECT_FALSE(fs::exists(root + "/ckpt-000001-step-0/device-0001.safetensors"));
}

}  // namespace
}  // namespace alpa::api
