// End-to-end auto-sharding of the zoo's training steps on a preset cluster with the default cost
// model: the plans that must come out qualitatively (data parallelism when the activations dwarf
// the weights, Megatron's pattern when the weights dwarf them), and the planner's guarantees
// (determinism, threads, memoised edge prices, an impossible memory budget, the pending sum of a
// value that leaves the program whole priced). The closed-form oracles of Alpa's tests, under
// Alpa's conditions, are in alpa_oracles_test.cc.
#include "sharding/auto_sharding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "cost/compute_cost.h"
#include "cost/liveness.h"
#include "hlo/parser.h"
#include "sharding/build_cost_graph.h"
#include "sharding/follow_util.h"
#include "sharding/resharding.h"
#include "sharding/strategy_dispatch.h"
#include "tests/sharding/train_step_plans.h"

namespace alpa::sharding {
namespace {

using testing::Count;
using testing::Describe;
using testing::GptTrainStep;
using testing::kGptBlockWeights;
using testing::MlpTrainStep;
using testing::NextValueSpec;
using testing::ParameterSpec;
using testing::Plan;
using testing::Planned;
using testing::TrainStep;

TEST(AutoShardingTest, LargeBatchSmallWeightsIsDataParallel) {
  // batch 16384, hidden 256: activations dwarf the weights, so splitting the batch over the four
  // devices and reducing the (small) gradients is cheapest.
  Planned planned = Plan(MlpTrainStep(16384, 256, 1), "p3.16xlarge:1x4", {4});
  EXPECT_EQ(ParameterSpec(planned, "x"), "[S0,R]") << Describe(planned);  // batch split
  EXPECT_EQ(ParameterSpec(planned, "y"), "[S0,R]");
  const ShardingEstimate& estimate = planned.solution.estimate;
  EXPECT_EQ(Count(estimate, cost::CollectiveKind::kAllToAll), 0) << "no activation moves";
  EXPECT_GT(estimate.communication.count.size(), 0u);  // the gradients are reduced
  // At most the weights' bytes twice over (reduce-scatter + all-gather or all-reduce), never
  // the activations'.
  EXPECT_LE(estimate.communication.bytes, 2 * 2 * (256 * 256 + 256) * 4);
}

// A kernel is launched once however it is sharded: the launches add launch x kernels to the step,
// not divided over the devices, and change no choice (every strategy of a node pays the same).
TEST(AutoShardingTest, EveryKernelsLaunchIsPaidOnceOnEachDevice) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  cluster::ClusterSpec unlaunched = *cluster;
  for (cluster::HostSpec& host : unlaunched.hosts) host.device.kernel_launch_s = 0;
  const Planned with = Plan(MlpTrainStep(16384, 256, 1), *cluster, {4});
  const Planned without = Plan(MlpTrainStep(16384, 256, 1), unlaunched, {4});
  const cost::DeviceThroughput device = cost::ThroughputOf(cluster->hosts[0].device);
  ASSERT_GT(device.kernel_launch_s, 0);
  int64_t kernels = 0;
  for (const auto& instruction : with.module->entry()->instructions()) {
    kernels += cost::LaunchSeconds(*instruction, device, with.solution.fused) > 0 ? 1 : 0;
  }
  EXPECT_GT(kernels, 10);
  EXPECT_NEAR(with.solution.estimate.compute_seconds - without.solution.estimate.compute_seconds,
              static_cast<double>(kernels) * device.kernel_launch_s, 1e-12);
  EXPECT_EQ(with.solution.choice, without.solution.choice);
}

// A saved plan's strategy names, pinned on every node, give back that plan, and on a step the
// solver alone would split otherwise, they win.
TEST(AutoShardingTest, PinnedStrategyNamesReproduceAPlan) {
  Planned data_parallel = Plan(MlpTrainStep(16384, 256, 1), "p3.16xlarge:1x4", {4});
  AutoShardingOptions options;
  std::vector<std::string> saved;
  for (size_t v = 0; v < data_parallel.solution.graph.nodes.size(); ++v) {
    const Strategy& chosen = data_parallel.solution.Chosen(static_cast<int64_t>(v));
    options.pinned_strategies[data_parallel.solution.graph.nodes[v].instruction->name()] =
        chosen.name;
    saved.push_back(chosen.name);
  }
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  Planned again = Plan(MlpTrainStep(16384, 256, 1), *cluster, {4}, options);
  std::vector<std::string> got;
  for (size_t v = 0; v < again.solution.graph.nodes.size(); ++v) {
    got.push_back(again.solution.Chosen(static_cast<int64_t>(v)).name);
  }
  EXPECT_EQ(got, saved);
  EXPECT_DOUBLE_EQ(again.solution.estimate.step_seconds(),
                   data_parallel.solution.estimate.step_seconds());
  // Batch 8, hidden 2048, where the solver alone goes Megatron-style (the test below): the
  // pinned names make it data parallel.
  Planned forced = Plan(MlpTrainStep(8, 2048, 1), *cluster, {4}, options);
  EXPECT_EQ(ParameterSpec(forced, "x"), "[S0,R]") << Describe(forced);

  options.pinned_strategies = {{"x", "[S7,R]"}};
  TrainStep step = MlpTrainStep(8, 2048, 1);
  Result<ShardingSolution> refused =
      AutoShard(*step.module->entry(), *cluster, testing::WholeMesh(*cluster, {4}), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("x: no strategy is named '[S7,R]'; it can take: "),
            std::string::npos)
      << refused.status().message();
}

TEST(AutoShardingTest, SmallBatchLargeWeightsIsMegatronStyle) {
  // batch 8, hidden 2048: the weights (16 MiB each) dwarf the activations; the first weight is
  // split by columns and the second by rows (Megatron's pattern), without being told.
  Planned planned = Plan(MlpTrainStep(8, 2048, 1), "p3.16xlarge:1x4", {4});
  EXPECT_EQ(ParameterSpec(planned, "layer0.w"), "[R,S0]") << Describe(planned);
  EXPECT_EQ(ParameterSpec(planned, "out.w"), "[S0,R]");
  for (const std::string weight : {"layer0.w", "out.w"}) {
    EXPECT_EQ(NextValueSpec(planned, weight), ParameterSpec(planned, weight)) << weight;
  }
  // No weight is ever gathered: only activations move.
  EXPECT_LT(planned.solution.estimate.communication.bytes, 2048 * 2048 * 4);
}

// The same layer with the default cost model (elementwise work and memory traffic priced, partial
// outputs allowed). qkv and fc1 come out split by columns and fc2 by rows, each weight's update in
// the weight's layout; the attention output projection is split by columns too: the residual
// stream stays split on the hidden dimension (all-gathers before qkv, the output projection and
// fc1, a reduce-scatter after fc2, small all-reduces of the LayerNorm statistics). That moves as
// many bytes as Megatron's two all-reduces per block (an all-reduce costs a reduce-scatter and an
// all-gather) but divides the elementwise work and the activation memory by the mesh, a
// sequence-parallel-like plan that Alpa's model, pricing communication alone, has no reason to
// prefer; under Alpa's conditions (alpa_oracles_test.cc) Megatron's plan comes out. Only what both
// plans share is asserted.
TEST(AutoShardingTest, GptLayerSplitsTheMlpLikeMegatron) {
  constexpr int64_t kBatch = 2, kSeq = 64, kHidden = 2048;
  Planned planned = Plan(GptTrainStep(kBatch, kSeq, kHidden), "p3.16xlarge:1x4", {1, 4});
  EXPECT_EQ(ParameterSpec(planned, "layer0.attn.qkv.w"), "[R,S1]") << Describe(planned);
  EXPECT_EQ(ParameterSpec(planned, "layer0.fc1.w"), "[R,S1]");
  EXPECT_EQ(ParameterSpec(planned, "layer0.fc2.w"), "[S1,R]");
  for (const std::string& weight : kGptBlockWeights) {
    EXPECT_EQ(NextValueSpec(planned, weight), ParameterSpec(planned, weight)) << weight;
  }
}

TEST(AutoShardingTest, SameInputGivesTheSameShardings) {
  Planned a = Plan(MlpTrainStep(64, 256, 2), "p3.16xlarge:1x4", {2, 2});
  Planned b = Plan(MlpTrainStep(64, 256, 2), "p3.16xlarge:1x4", {2, 2});
  ASSERT_EQ(a.solution.choice, b.solution.choice);
  EXPECT_EQ(a.solution.estimate.step_seconds(), b.solution.estimate.step_seconds());
  EXPECT_EQ(a.solution.estimate.peak_memory_bytes, b.solution.estimate.peak_memory_bytes);
}

// The planner's default policy (no effort given) is bounded by effort, not time: the same
// choice on every run, and the same on threads as alone.
TEST(AutoShardingTest, MeshesOnThreadsGiveWhatEachGivesAlone) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  std::vector<cluster::LogicalMesh> meshes;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4}, {2, 2}, {1, 4}}) {
    Result<cluster::LogicalMesh> mesh =
        cluster::MakeLogicalMesh(*cluster, cluster::WholeClusterMesh(*cluster), shape);
    ASSERT_TRUE(mesh.ok());
    meshes.push_back(*mesh);
  }
  const TrainStep step = MlpTrainStep(64, 256, 2);
  const std::unique_ptr<ir::Module>& module = step.module;
  AutoShardingOptions options;
  options.solve.time_limit_s = 20;
  options.next_values = step.next_values;
  const std::vector<Result<ShardingSolution>> threaded =
      AutoShardMeshes(*module->entry(), *cluster, meshes,
                      std::vector<AutoShardingOptions>(meshes.size(), options), /*threads=*/3);
  ASSERT_EQ(threaded.size(), meshes.size());
  for (size_t m = 0; m < meshes.size(); ++m) {
    Result<ShardingSolution> alone = AutoShard(*module->entry(), *cluster, meshes[m], options);
    ASSERT_TRUE(alone.ok() && threaded[m].ok());
    EXPECT_EQ(threaded[m]->choice, alone->choice) << "mesh " << m;
    EXPECT_EQ(threaded[m]->estimate.step_seconds(), alone->estimate.step_seconds());
    EXPECT_GE(alone->timings.solve_s, 0);
  }
}

// BuildCostGraph memoises edge matrices across the repeated layers: every price must still be
// what the resharding model says for that edge's own specs.
TEST(AutoShardingTest, MemoisedEdgePricesEqualDirectPrices) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  Result<cluster::LogicalMesh> mesh =
      cluster::MakeLogicalMesh(*cluster, cluster::WholeClusterMesh(*cluster), {2, 2});
  ASSERT_TRUE(mesh.ok());
  Result<ReshardCostModel> reshard = ReshardCostModel::Create(*cluster, *mesh);
  ASSERT_TRUE(reshard.ok());
  std::unique_ptr<ir::Module> module = MlpTrainStep(64, 256, 3).module;
  StrategyContext context;
  context.cluster = &*cluster;
  context.mesh = &*mesh;
  context.device = cost::ThroughputOf(cluster->hosts[0].device);
  context.pricer = &*reshard;
  StrategyGraph graph;
  ASSERT_TRUE(GenerateStrategies(*module->entry(), context, DispatchStrategies, graph).ok());
  const CostGraph cost_graph =
      BuildCostGraph(graph, cost::ComputeLiveness(*module->entry()), *reshard);
  size_t e = 0;
  for (const StrategyNode& user : graph.nodes) {
    for (const OperandLeaf& operand : OperandLeaves(*user.instruction)) {
      const CostGraphEdge& edge = cost_graph.edges[e++];
      const ValueSource source =
          graph.SourceOf(*user.instruction->operand(operand.operand), operand.leaf);
      const auto& rows = graph.nodes[static_cast<size_t>(source.node)].set.strategies;
      const auto& cols = user.set.strategies;
      const bool followed = cost_graph.nodes[static_cast<size_t>(edge.to)].follows == source.node &&
                            user.set.follows_operand == operand.operand;
      for (size_t i = 0; i < rows.size(); ++i) {
        for (size_t j = 0; j < cols.size(); ++j) {
          const double direct =
              followed && i != j
                  ? 0.0
                  : reshard->ReshardSeconds(rows[i].output[static_cast<size_t>(source.leaf)],
                                            cols[j].operands[static_cast<size_t>(operand.operand)]
                                                            [static_cast<size_t>(operand.leaf)],
                                            operand.shape->dims(),
                                            ir::DTypeByteSize(operand.shape->dtype()));
          ASSERT_EQ(edge.seconds[i * cols.size() + j], direct) << user.instruction->name();
        }
      }
    }
  }
  EXPECT_EQ(e, cost_graph.edges.size());
}

TEST(AutoShardingTest, ImpossibleBudgetNamesTheLeastMemory) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  Result<cluster::LogicalMesh> mesh =
      cluster::MakeLogicalMesh(*cluster, cluster::WholeClusterMesh(*cluster), {4});
  ASSERT_TRUE(mesh.ok());
  const TrainStep step = MlpTrainStep(64, 256, 2);
  AutoShardingOptions options;
  options.next_values = step.next_values;
  options.memory_budget_bytes = 1024;
  options.solve.time_limit_s = 5;
  Result<ShardingSolution> solution = AutoShard(*step.module->entry(), *cluster, *mesh, options);
  ASSERT_FALSE(solution.ok());
  EXPECT_EQ(solution.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(solution.status().message().find("the least memory any sharding needs is"),
            std::string::npos)
      << solution.status().message();
}

// Next values and a forced batch axis name things the step and the mesh must have.
TEST(AutoShardingTest, BadNextValuesAndBatchAxesAreErrors) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  Result<cluster::LogicalMesh> mesh =
      cluster::MakeLogicalMesh(*cluster, cluster::WholeClusterMesh(*cluster), {4});
  ASSERT_TRUE(mesh.ok());
  const TrainStep step = MlpTrainStep(64, 32, 1);
  auto message = [&](const AutoShardingOptions& options) {
    Result<ShardingSolution> solution = AutoShard(*step.module->entry(), *cluster, *mesh, options);
    EXPECT_FALSE(solution.ok());
    return solution.ok() ? std::string() : solution.status().message();
  };
  AutoShardingOptions options;
  options.next_values = {{"nope", "x"}};
  EXPECT_NE(message(options).find("'nope' is not a parameter"), std::string::npos);
  options.next_values = {{"x", "nope"}};
  EXPECT_NE(message(options).find("'nope' is not an instruction"), std::string::npos);
  options.next_values = {{"layer0.w", "x"}};  // f32[32,32] replaced by f32[64,32]
  EXPECT_NE(message(options).find("%x has another shape"), std::string::npos);
  options.next_values.clear();
  options.force_batch_axis = 1;
  EXPECT_NE(message(options).find("forced to mesh axis 1, but the mesh [4] has axes 0 to 0"),
            std::string::npos);
}

// A value that leaves the program whole (a pipeline stage's sent value): a strategy that leaves
// it a pending sum pays that sum's all-reduce, in the problem and in the estimate.
TEST(AutoShardingTest, AWholeValueLeftAPendingSumPaysItsAllReduce) {
  // Contracting x @ w over 4096 split leaves a pending sum; splitting the rows of x does not, at
  // the same compute.
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(R"(HloModule sent
ENTRY sent {
  x = f32[8,4096] parameter(0)
  w = f32[4096,8] parameter(1)
  ROOT y = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                                                   "sent.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const ir::Computation& entry = *(*module)->entry();
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  const cluster::LogicalMesh mesh = testing::WholeMesh(*cluster, {4});
  auto plan = [&](const AutoShardingOptions& options) {
    Result<ShardingSolution> solution = AutoShard(entry, *cluster, mesh, options);
    EXPECT_TRUE(solution.ok()) << solution.status().message();
    return std::move(solution).value();
  };
  auto output_of_y = [&](const ShardingSolution& solution) {
    return solution.Chosen(solution.graph.NodeOf(*entry.root())).output[0];
  };
  AutoShardingOptions whole;
  whole.whole_values = {"y"};
  const ShardingSpec chosen = output_of_y(plan(whole));
  EXPECT_TRUE(chosen.partial_axes.empty()) << ToString(chosen);

  // Pinned to the split contraction, the sum is priced on y's node as the resharding of its
  // pending sum into the whole value.
  const ShardingSolution free = plan({});
  const StrategyNode& node =
      free.graph.nodes[static_cast<size_t>(free.graph.NodeOf(*entry.root()))];
  const auto partial = std::ranges::find_if(node.set.strategies, [](const Strategy& strategy) {
    return !strategy.output[0].partial_axes.empty();
  });
  ASSERT_NE(partial, node.set.strategies.end());
  AutoShardingOptions pinned;
  pinned.pinned_strategies = {{"y", partial->name}};
  const ShardingSolution left = plan(pinned);
  pinned.whole_values = {"y"};
  const ShardingSolution summed = plan(pinned);
  Result<ReshardCostModel> reshard = ReshardCostModel::Create(*cluster, mesh);
  ASSERT_TRUE(reshard.ok());
  const ShardingSpec& produced = partial->output[0];
  EXPECT_DOUBLE_EQ(summed.estimate.step_seconds() - left.estimate.step_seconds(),
                   reshard->ReshardSeconds(produced, WithoutPartial(produced), {8, 8}, 4));
  EXPECT_EQ(Count(summed.estimate, cost::CollectiveKind::kAllReduce),
            Count(left.estimate, cost::CollectiveKind::kAllReduce) + 1);

  whole.whole_values = {"nope"};
  Result<ShardingSolution> unknown = AutoShard(entry, *cluster, mesh, whole);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("whole values: 'nope' is not an instruction"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace alpa::sharding
