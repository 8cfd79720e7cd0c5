// The consistency harness for the partitioner: the MLP training step, planned on a mesh of 4 and
// partitioned, run on 4 in-process devices (runtime/spmd_executor.h) from the split arguments,
// gives, once its results are assembled, the unsplit step's results in the reference
// interpreter (loss, updated weights and optimizer state) within f32 rounding. Likewise a GPT step,
// and a depthwise convolution split along its groups.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "runtime/spmd_executor.h"
#include "sharding/pins.h"
#include "spmd/collective_stats.h"
#include "spmd/literal_split.h"
#include "spmd/partitioner.h"
#include "tests/sharding/train_step_plans.h"
#include "tests/spmd/run_on_devices.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;

// Random weights and batch; the Adam moments and the step count start at zero.
std::vector<ir::Literal> StepArguments(const ir::Computation& step) {
  std::vector<ir::Literal> arguments = interp::RandomArguments(step, 11);
  for (const ir::Instruction* parameter : step.parameters()) {
    const std::string& name = parameter->name();
    if (name == "step" || name.ends_with(".m") || name.ends_with(".v")) {
      arguments[static_cast<size_t>(parameter->attributes().parameter_number)] =
          ir::Literal::CreateZeros(parameter->shape());
    }
  }
  return arguments;
}

void ExpectSameStep(sharding::testing::TrainStep train_step, int64_t force_batch_axis,
                    const std::vector<std::string>& batch_parameters,
                    const std::vector<int64_t>& mesh) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  // Priced as our runtime runs it (elementwise chains as loops, every other instruction as a
  // kernel of its own): with the V100s' fused kernels the MLP's compute is so cheap that the
  // solver keeps it whole on every device and nothing communicates.
  for (cluster::HostSpec& host : cluster->hosts) host.device.fuses_kernels = false;
  sharding::AutoShardingOptions options;
  options.force_batch_axis = force_batch_axis;
  if (force_batch_axis >= 0) options.batch_parameters = batch_parameters;
  const sharding::testing::Planned planned =
      sharding::testing::Plan(std::move(train_step), *cluster, mesh, options);
  const ir::Computation& step = *planned.module->entry();
  PartitionOptions partition;
  Result<std::map<int64_t, ShardingSpec>> result_specs =
      NextValueResultSpecs(step, planned.solution, planned.next_values);
  ASSERT_TRUE(result_specs.ok()) << result_specs.status().message();
  partition.result_specs = *result_specs;
  Result<std::unique_ptr<ir::Module>> program =
      PartitionComputation(step, planned.solution, mesh, partition);
  ASSERT_TRUE(program.ok()) << program.status().message();
  // A plan that communicates: the check exercises the collectives, not just local ops.
  const CollectiveStats stats = CountCollectives(*(*program)->entry());
  EXPECT_GT(stats.bytes, 0);
  // ... and runs the collectives the cost model priced, count per kind and bytes.
  EXPECT_EQ(stats.count, planned.solution.estimate.communication.count) << ToString(stats);
  EXPECT_EQ(stats.bytes, planned.solution.estimate.communication.bytes) << ToString(stats);
  ::testing::Test::RecordProperty("collectives", ToString(stats));

  const std::vector<ir::Literal> arguments = StepArguments(step);
  const std::vector<ShardingSpec> specs = ResultSpecs(step, planned.solution, partition);
  Result<std::vector<ir::Literal>> results =
      RunOnFourDevices(**program, step, planned.solution, arguments, mesh, specs);
  ASSERT_TRUE(results.ok()) << results.status().message();
  Result<ir::Literal> expected = interp::EvaluateModule(*planned.module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  ASSERT_EQ(results->size(), expected->tuple_elements().size());
  for (size_t leaf = 0; leaf < specs.size(); ++leaf) {
    const ir::Literal& want = expected->tuple_element(static_cast<int64_t>(leaf));
    const ir::Literal& got = (*results)[leaf];
    double worst = 0, scale = 1e-3;
    for (int64_t i = 0; i < want.element_count(); ++i) {
      worst = std::max(worst, std::abs(got.GetDouble(i) - want.GetDouble(i)));
      scale = std::max(scale, std::abs(want.GetDouble(i)));
    }
    EXPECT_LE(worst, 1e-4 * scale)
        << "result element " << leaf << " (" << sharding::ToString(specs[leaf]) << ")";
  }
}

void ExpectSameMlpStep(int64_t batch, int64_t hidden, int64_t force_batch_axis,
                       const std::vector<int64_t>& mesh = {4}) {
  ExpectSameStep(sharding::testing::MlpTrainStep(batch, hidden, 2), force_batch_axis, {"x", "y"},
                 mesh);
}

TEST(PartitionedExecutionTest, DataParallelMlpStepOnFourDevices) { ExpectSameMlpStep(64, 32, 0); }

TEST(PartitionedExecutionTest, MegatronLikeMlpStepOnFourDevices) { ExpectSameMlpStep(8, 1024, -1); }

// Data parallel over axis 0 and operator parallel over axis 1 of a (2, 2) mesh (hidden 512: at
// 256 the loops make the MLP's elementwise work cheap enough that the solver shards nothing).
TEST(PartitionedExecutionTest, TwoDimensionalMeshMlpStep) {
  ExpectSameMlpStep(16, 256, 0, {2, 2});
  ExpectSameMlpStep(8, 512, -1, {2, 2});
}

// SGD: Adam divides each gradient by its own magnitude, so a gradient that is zero up to rounding
// (the key bias's: softmax ignores a shift shared by all keys) moves its weight by up to the
// learning rate, in a direction that depends on the order of the sums.
void ExpectSameGptStep(int64_t batch, int64_t hidden, int64_t force_batch_axis,
                       const std::vector<int64_t>& mesh) {
  autodiff::TrainStepOptions sgd;
  sgd.optimizer.kind = autodiff::OptimizerKind::kSgd;
  sgd.optimizer.momentum = 0.9;
  ExpectSameStep(sharding::testing::GptTrainStep(batch, 16, hidden, sgd), force_batch_axis,
                 {"tokens", "labels"}, mesh);
}

TEST(PartitionedExecutionTest, DataParallelGptStep) { ExpectSameGptStep(8, 64, 0, {4}); }

TEST(PartitionedExecutionTest, OperatorParallelGptStep) { ExpectSameGptStep(1, 512, -1, {4}); }

TEST(PartitionedExecutionTest, TwoDimensionalMeshGptStep) {
  ExpectSameGptStep(8, 64, 0, {2, 2});
  ExpectSameGptStep(1, 512, -1, {2, 2});
}

// A depthwise convolution (one group per feature) with its features split over 4 devices: each
// device convolves 4 of the 16 groups, so its local feature_group_count is 4, not 16.
TEST(PartitionedExecutionTest, DepthwiseConvolutionSplitAlongItsGroups) {
  constexpr std::string_view kText = R"(HloModule depthwise
ENTRY main {
  x = f32[2,6,6,16] parameter(0), sharding={devices=[1,1,1,4]<=[4]}
  k = f32[3,3,1,16] parameter(1), sharding={devices=[1,1,1,4]<=[4]}
  ROOT y = f32[2,6,6,16] convolution(x, k), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f, feature_group_count=16, sharding={devices=[1,1,1,4]<=[4]}
})";
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(kText, "depthwise");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const ir::Computation& entry = *(*module)->entry();
  const std::vector<int64_t> mesh = {4};
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  sharding::AutoShardingOptions options;
  Result<sharding::Pins> pins = sharding::PinsFromHloShardings(entry, mesh);
  ASSERT_TRUE(pins.ok()) << pins.status().message();
  options.pinned_outputs = *pins;
  Result<sharding::ShardingSolution> solution =
      sharding::AutoShard(entry, *cluster, sharding::testing::WholeMesh(*cluster, mesh), options);
  ASSERT_TRUE(solution.ok()) << solution.status().message();
  Result<std::unique_ptr<ir::Module>> program = PartitionComputation(entry, *solution, mesh);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ir::Instruction* local = (*program)->entry()->root();
  ASSERT_EQ(local->opcode(), ir::Opcode::kConvolution);
  EXPECT_EQ(local->attributes().feature_group_count, 4);
  EXPECT_TRUE(CountCollectives(*(*program)->entry()).count.empty());

  const std::vector<ir::Literal> arguments = interp::RandomArguments(entry, 5);
  Result<std::vector<ir::Literal>> got =
      RunOnFourDevices(**program, entry, *solution, arguments, mesh,
                       {solution->Chosen(solution->graph.NodeOf(*entry.root())).output[0]});
  ASSERT_TRUE(got.ok()) << got.status().message();
  Result<ir::Literal> want = interp::EvaluateModule(**module, arguments);
  ASSERT_TRUE(want.ok());
  for (int64_t i = 0; i < want->element_count(); ++i) {
    ASSERT_NEAR((*got)[0].GetDouble(i), want->GetDouble(i), 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace alpa::spmd
