// The parity matrix of the runtime (issue 7): each tiny zoo model, planned with each parallel
// method on each mesh, partitioned and run on in-process devices for 3 training steps, gives the
// reference interpreter's losses and updated weights and optimizer state within f32 rounding,
// runs exactly the collectives the cost model priced, and holds within 1% of the memory the
// cost model predicted per device.
#include "api/parallelize.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "cluster/presets.h"
#include "interp/evaluator.h"
#include "models/init.h"
#include "models/zoo.h"
#include "tests/api/relative_difference.h"
#include "tests/api/zoo_step.h"

namespace alpa::api {
namespace {

using sharding::ParallelMethod;
using ::testing::HasSubstr;

struct Cell {
  std::string model;
  ParallelMethod method;
  std::string cluster;  // a p3.16xlarge host of 2 or 4 devices
  std::vector<int64_t> mesh;
  bool force_batch_axis = true;  // for kShard (see the test)
};

std::string CellName(const ::testing::TestParamInfo<Cell>& info) {
  std::string name =
      info.param.model + "_" + std::string(sharding::ParallelMethodName(info.param.method));
  for (int64_t n : info.param.mesh) name += "_" + std::to_string(n);
  if (!info.param.force_batch_axis) name += "_solver_alone";
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

using testing::AppendBatch;
using testing::BuildStep;
using testing::FirstArguments;
using testing::RelativeDifference;
using testing::ZooStep;

class ParityTest : public ::testing::TestWithParam<Cell> {};

TEST_P(ParityTest, ThreeStepsMatchTheReferenceInterpreter) {
  const Cell& cell = GetParam();
  const ZooStep step = BuildStep(cell.model);
  Result<TrainStep> described = DescribeTrainStep(*step.module, step.layout);
  ASSERT_TRUE(described.ok()) << described.status().message();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument(cell.cluster);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  // The devices measured here run one kernel per instruction (our runtime), so the memory model
  // must not fuse as it would for the V100s' compiler (cost/kernel_fusion.h).
  for (cluster::HostSpec& host : cluster->hosts) host.device.fuses_kernels = false;
  ParallelizeOptions options;
  options.method = cell.method;
  options.mesh_shape = cell.mesh;
  if (cell.method == ParallelMethod::kShard && cell.force_batch_axis) {
    // Left alone the solver keeps most of a tiny model whole on every device (a collective
    // costs more than its compute), which would test little: split the batch along the first
    // axis of more than one device (Alpa's force_batch_dim_to_mesh_dim), as a user planning
    // data x operator parallelism does. The planner then splits the weights' state as well.
    options.batch_axis = cell.mesh[0] > 1 ? 0 : 1;
  }
  Result<ParallelExecutable> executable = Parallelize(*described, *cluster, options);
  ASSERT_TRUE(executable.ok()) << executable.status().message();
  EXPECT_EQ(executable->mesh_shape(), cell.mesh);
  EXPECT_EQ(executable->comm_stats().count, executable->estimate().communication.count)
      << spmd::ToString(executable->comm_stats());
  EXPECT_EQ(executable->comm_stats().bytes, executable->estimate().communication.bytes);
  ::testing::Test::RecordProperty("collectives", spmd::ToString(executable->comm_stats()));

  std::vector<ir::Literal> carried = FirstArguments(step);  // the reference's
  std::vector<ir::Literal> parallel_carried = carried;
  for (int64_t index = 0; index < 3; ++index) {
    std::vector<ir::Literal> arguments = carried, parallel_arguments = parallel_carried;
    AppendBatch(step, index, arguments);
    AppendBatch(step, index, parallel_arguments);
    Result<ir::Literal> want = interp::EvaluateModule(*step.module, arguments);
    ASSERT_TRUE(want.ok()) << want.status().message();
    Result<std::vector<ir::Literal>> got = executable->Run(parallel_arguments);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->tuple_elements().size());
    for (size_t leaf = 0; leaf < got->size(); ++leaf) {
      EXPECT_LE(RelativeDifference((*got)[leaf], want->tuple_element(static_cast<int64_t>(leaf))),
                1e-4)
          << "step " << index + 1 << ", result element " << leaf << " ("
          << sharding::ToString(executable->result_specs()[leaf]) << ")";
    }
    // Results: the loss, then the carried values in parameter order.
    carried.assign(want->tuple_elements().begin() + 1, want->tuple_elements().end());
    parallel_carried.assign(got->begin() + 1, got->end());
  }
  // The devices hold what the memory model predicted: the same buffers under the same liveness
  // rules, the partitioned program's resharded copies and partial sums included (a few bytes
  // apart where a reshard's route differs from the model's).
  const auto predicted = static_cast<double>(executable->estimate().peak_memory_bytes);
  const auto measured = static_cast<double>(executable->peak_memory_bytes());
  EXPECT_LE(std::abs(measured - predicted), 0.01 * predicted)
      << "measured " << measured << " B, predicted " << predicted << " B";
  ::testing::Test::RecordProperty("measured_over_predicted_peak_memory",
                                  std::to_string(measured / predicted));
}

std::vector<Cell> Matrix() {
  std::vector<Cell> cells;
  for (const char* model :
       {"mlp-tiny", "gpt-tiny", "moe-tiny", "llama-tiny", "mixtral-tiny", "wresnet-tiny"}) {
    for (ParallelMethod method :
         {ParallelMethod::kData, ParallelMethod::kZero2, ParallelMethod::kZero3}) {
      cells.push_back({model, method, "p3.16xlarge:1x4", {4}});
    }
    for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{1, 2}, {2, 1}}) {
      cells.push_back({model, ParallelMethod::kShard, "p3.16xlarge:1x2", mesh});
    }
    for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{2, 2}, {1, 4}, {4, 1}}) {
      cells.push_back({model, ParallelMethod::kShard, "p3.16xlarge:1x4", mesh});
    }
    // The solver's own layouts, which move tiles between devices in orders the forced batch
    // axis never needs (wresnet-tiny: [R,R,R,S01] -> [R,R,R,S1]).
    cells.push_back({model, ParallelMethod::kShard, "local:4", {2, 2}, false});
  }
  return cells;
}

INSTANTIATE_TEST_SUITE_P(Matrix, ParityTest, ::testing::ValuesIn(Matrix()), CellName);

TEST(ParallelizeTest, DataParallelMethodsRunOnTheOneDimensionalMesh) {
  const ZooStep step = BuildStep("mlp-tiny");
  Result<TrainStep> described = DescribeTrainStep(*step.module, step.layout);
  ASSERT_TRUE(described.ok());
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  ParallelizeOptions options;
  options.method = ParallelMethod::kData;
  options.mesh_shape = {2, 2};
  Result<ParallelExecutable> executable = Parallelize(*described, *cluster, options);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(executable.status().message().find("1-D mesh of all 4 devices"), std::string::npos)
      << executable.status().message();
}

// gpt-tiny under ZeRO-3 on 4 devices: every weight and its state split, so the devices' tiles
// are not the whole values.
ParallelExecutable ZeroThreeGptTiny(const ZooStep& step) {
  Result<TrainStep> described = DescribeTrainStep(*step.module, step.layout);
  EXPECT_TRUE(described.ok()) << described.status().message();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("local:4");
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  ParallelizeOptions options;
  options.method = ParallelMethod::kZero3;
  Result<ParallelExecutable> executable = Parallelize(*described, *cluster, options);
  EXPECT_TRUE(executable.ok()) << executable.status().message();
  return std::move(executable).value();
}

// Carried values kept on the devices (Place, Step, Fetch) take the same steps as whole values
// threaded through Run, bit for bit: the same tiles meet the same program.
TEST(DeviceStateTest, StepsOnTheDevicesMatchWholeRunsBitForBit) {
  const ZooStep step = BuildStep("gpt-tiny");
  ParallelExecutable executable = ZeroThreeGptTiny(step);
  std::vector<ir::Literal> carried = FirstArguments(step);
  std::vector<int64_t> expected(carried.size());
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(executable.carried_parameters(), expected);  // the weights, their state and t

  Result<DeviceState> state = executable.Place(carried);
  ASSERT_TRUE(state.ok()) << state.status().message();
  for (int64_t index = 0; index < 3; ++index) {
    std::vector<ir::Literal> arguments = carried, batch;
    AppendBatch(step, index, arguments);
    AppendBatch(step, index, batch);
    Result<std::vector<ir::Literal>> whole = executable.Run(arguments);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    Result<std::vector<ir::Literal>> loss = executable.Step(*state, batch);
    ASSERT_TRUE(loss.ok()) << loss.status().message();
    ASSERT_EQ(loss->size(), 1u);  // the loss alone comes back
    EXPECT_EQ((*loss)[0], (*whole)[0]) << "step " << index + 1;
    carried.assign(whole->begin() + 1, whole->end());
  }
  Result<std::vector<ir::Literal>> fetched = executable.Fetch(*state);
  ASSERT_TRUE(fetched.ok()) << fetched.status().message();
  ASSERT_EQ(fetched->size(), carried.size());
  for (size_t i = 0; i < carried.size(); ++i) {
    EXPECT_EQ((*fetched)[i], carried[i]) << step.module->entry()->parameters()[i]->name();
  }
}

TEST(DeviceStateTest, WrongCountsAndAnEmptyStateAreNamed) {
  const ZooStep step = BuildStep("gpt-tiny");
  ParallelExecutable executable = ZeroThreeGptTiny(step);
  std::vector<ir::Literal> carried = FirstArguments(step);
  carried.pop_back();
  Result<DeviceState> short_state = executable.Place(carried);
  ASSERT_FALSE(short_state.ok());
  EXPECT_THAT(short_state.status().message(),
              HasSubstr(fmt::format("carries {} values from step to step, not {}",
                                    carried.size() + 1, carried.size())));

  DeviceState empty;
  Result<std::vector<ir::Literal>> nothing = executable.Step(empty, {});
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(nothing.status().message(), HasSubstr("Place the carried values again"));

  Result<DeviceState> state = executable.Place(FirstArguments(step));
  ASSERT_TRUE(state.ok()) << state.status().message();
  Result<std::vector<ir::Literal>> no_batch = executable.Step(*state, {});
  ASSERT_FALSE(no_batch.ok());
  EXPECT_THAT(no_batch.status().message(), HasSubstr("fresh arguments a step"));
  EXPECT_FALSE(state->empty());  // a step refused before it ran keeps the values
}

}  // namespace
}  // namespace alpa::api
