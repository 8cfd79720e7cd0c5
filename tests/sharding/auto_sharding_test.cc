// End-to-end auto-sharding of training steps: the qualitative oracles of Alpa's test_mlp.py
// (reference/alpa.md 7) on our cost model. Alpa's closed-form objectives are in its own unitless
// alpha-beta units; ours are seconds on a described cluster, so the tests assert the layouts and
// the collectives that make those objectives, which do not depend on the units.
#include "sharding/auto_sharding.h"

#include <gtest/gtest.h>

#include "autodiff/train_step.h"
#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "cost/liveness.h"
#include "models/mlp.h"
#include "sharding/build_cost_graph.h"
#include "sharding/strategy_dispatch.h"

namespace alpa::sharding {
namespace {

std::unique_ptr<ir::Module> MlpTrainStep(int64_t batch, int64_t hidden, int64_t layers) {
  models::MlpConfig config;
  config.batch = batch;
  config.input = hidden;
  config.hidden = hidden;
  config.output = hidden;
  config.layers = layers;
  Result<models::Model> model = models::BuildMlp(config);
  EXPECT_TRUE(model.ok()) << model.status().message();
  autodiff::TrainStepOptions options;  // SGD, one micro-batch
  Result<std::unique_ptr<ir::Module>> step =
      autodiff::BuildTrainStep(*model->loss, model->weights, options);
  EXPECT_TRUE(step.ok()) << step.status().message();
  return std::move(step).value();
}

struct Planned {
  std::unique_ptr<ir::Module> module;
  ShardingSolution solution;
};

Planned Plan(std::unique_ptr<ir::Module> module, const std::string& cluster_argument,
             const std::vector<int64_t>& mesh_shape) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument(cluster_argument);
  EXPECT_TRUE(cluster.ok());
  Result<cluster::LogicalMesh> mesh =
      cluster::MakeLogicalMesh(*cluster, cluster::WholeClusterMesh(*cluster), mesh_shape);
  EXPECT_TRUE(mesh.ok());
  AutoShardingOptions options;
  options.solve.time_limit_s = 20;
  options.solve.effort = 200'000;
  Result<ShardingSolution> solution = AutoShard(*module->entry(), *cluster, *mesh, options);
  EXPECT_TRUE(solution.ok()) << solution.status().message();
  return Planned{std::move(module), std::move(solution).value()};
}

// The chosen output spec of the entry parameter named `name` (the MLP's names: x, y,
// layer0.w, layer0.b, out.w, out.b).
std::string ParameterSpec(const Planned& planned, const std::string& name) {
  const ShardingSolution& solution = planned.solution;
  for (size_t v = 0; v < solution.graph.nodes.size(); ++v) {
    const ir::Instruction& instruction = *solution.graph.nodes[v].instruction;
    if (instruction.opcode() == ir::Opcode::kParameter && instruction.name() == name) {
      return ToString(solution.Chosen(static_cast<int64_t>(v)).output[0]);
    }
  }
  ADD_FAILURE() << "no parameter " << name;
  return "";
}

int64_t Count(const ShardingEstimate& estimate, cost::CollectiveKind kind) {
  auto it = estimate.communication.count.find(kind);
  return it == estimate.communication.count.end() ? 0 : it->second;
}

TEST(AutoShardingTest, LargeBatchSmallWeightsIsDataParallel) {
  // batch 16384, hidden 256: activations dwarf the weights, so splitting the batch over the four
  // devices and reducing the (small) gradients is cheapest.
  Planned planned = Plan(MlpTrainStep(16384, 256, 1), "p3.16xlarge:1x4", {4});
  EXPECT_EQ(ParameterSpec(planned, "x"), "[S0,R]");  // batch split
  EXPECT_EQ(ParameterSpec(planned, "y"), "[S0,R]");
  const ShardingEstimate& estimate = planned.solution.estimate;
  EXPECT_EQ(Count(estimate, cost::CollectiveKind::kAllToAll), 0) << "no activation moves";
  EXPECT_GT(estimate.communication.count.size(), 0u);  // the gradients are reduced
  // At most the weights' bytes twice over (reduce-scatter + all-gather or all-reduce), never
  // the activations'.
  EXPECT_LE(estimate.communication.bytes, 2 * 2 * (256 * 256 + 256) * 4);
}

TEST(AutoShardingTest, SmallBatchLargeWeightsIsMegatronStyle) {
  // batch 8, hidden 2048: the weights (16 MiB each) dwarf the activations; the first weight is
  // split by columns and the second by rows (Megatron's pattern), without being told.
  Planned planned = Plan(MlpTrainStep(8, 2048, 1), "p3.16xlarge:1x4", {4});
  EXPECT_EQ(ParameterSpec(planned, "layer0.w"), "[R,S0]");
  EXPECT_EQ(ParameterSpec(planned, "out.w"), "[S0,R]");
  // No weight is ever gathered: only activations move.
  EXPECT_LT(planned.solution.estimate.communication.bytes, 2048 * 2048 * 4);
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
  std::unique_ptr<ir::Module> module = MlpTrainStep(64, 256, 2);
  AutoShardingOptions options;
  options.solve.time_limit_s = 20;
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
  std::unique_ptr<ir::Module> module = MlpTrainStep(64, 256, 3);
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
  std::unique_ptr<ir::Module> module = MlpTrainStep(64, 256, 2);
  AutoShardingOptions options;
  options.memory_budget_bytes = 1024;
  options.solve.time_limit_s = 5;
  Result<ShardingSolution> solution = AutoShard(*module->entry(), *cluster, *mesh, options);
  ASSERT_FALSE(solution.ok());
  EXPECT_EQ(solution.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(solution.status().message().find("the least memory any sharding needs is"),
            std::string::npos)
      << solution.status().message();
}

}  // namespace
}  // namespace alpa::sharding
