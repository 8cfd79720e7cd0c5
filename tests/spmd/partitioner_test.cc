// The SPMD partitioner on the zoo's MLP training step as AutoShard plans it on a 1-D mesh of 4:
// data parallel (batch forced to the mesh axis) and Megatron-like (small batch, wide layers).
// The partitioned program verifies, holds every value with its local shape, and runs exactly the
// collectives the cost model priced (issue 7: count and bytes).
#include "spmd/partitioner.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/verifier.h"
#include "spmd/collective_stats.h"
#include "spmd/literal_split.h"
#include "tests/sharding/train_step_plans.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;
using sharding::testing::Describe;
using sharding::testing::MlpTrainStep;
using sharding::testing::ParameterSpec;
using sharding::testing::Plan;
using sharding::testing::Planned;

Planned PlanMlp(int64_t batch, int64_t hidden, const std::vector<int64_t>& mesh,
                int64_t force_batch_axis) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument(
      mesh.size() == 1 && mesh[0] == 1 ? "p3.16xlarge:1x1" : "p3.16xlarge:1x4");
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  sharding::AutoShardingOptions options;
  options.force_batch_axis = force_batch_axis;
  if (force_batch_axis >= 0) options.batch_parameters = {"x", "y"};
  return Plan(MlpTrainStep(batch, hidden, 2), *cluster, mesh, options);
}

struct Partitioned {
  std::unique_ptr<ir::Module> module;
  PartitionOptions options;
};

Partitioned Partition(const Planned& planned, const std::vector<int64_t>& mesh) {
  Partitioned out;
  Result<std::map<int64_t, ShardingSpec>> specs =
      NextValueResultSpecs(*planned.module->entry(), planned.solution, planned.next_values);
  EXPECT_TRUE(specs.ok()) << specs.status().message();
  out.options.result_specs = *specs;
  Result<std::unique_ptr<ir::Module>> module =
      PartitionComputation(*planned.module->entry(), planned.solution, mesh, out.options);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (module.ok()) out.module = std::move(module).value();
  return out;
}

ir::Shape Local(const ir::Shape& global, const ShardingSpec& spec,
                const std::vector<int64_t>& mesh) {
  Result<ir::Shape> local = LocalShape(global, spec, mesh, "test");
  EXPECT_TRUE(local.ok()) << local.status().message();
  return local.ok() ? *local : ir::Shape();
}

// The checks every partitioned plan must pass.
void ExpectPartitionedLikeThePlan(const Planned& planned, const Partitioned& partitioned,
                                  const std::vector<int64_t>& mesh) {
  ASSERT_NE(partitioned.module, nullptr);
  ASSERT_TRUE(ir::VerifyModule(*partitioned.module).ok());
  const ir::Computation& original = *planned.module->entry();
  const ir::Computation& program = *partitioned.module->entry();
  const sharding::ShardingSolution& solution = planned.solution;

  // Parameters: same numbers and names, local shapes.
  ASSERT_EQ(program.parameter_count(), original.parameter_count());
  for (const ir::Instruction* parameter : original.parameters()) {
    const ir::Instruction* local =
        program.parameters()[static_cast<size_t>(parameter->attributes().parameter_number)];
    EXPECT_EQ(local->name(), parameter->name());
    const ShardingSpec& spec = solution.Chosen(solution.graph.NodeOf(*parameter)).output[0];
    EXPECT_EQ(local->shape(), Local(parameter->shape(), spec, mesh)) << parameter->name();
  }
  // Every value without collectives of its own keeps its name and has its local shape.
  int64_t checked = 0;
  for (const auto& instruction : original.instructions()) {
    const int64_t node = solution.graph.NodeOf(*instruction);
    if (node < 0 || !instruction->shape().IsArray()) continue;
    const sharding::Strategy& strategy = solution.Chosen(node);
    if (!strategy.collectives.empty()) continue;
    const ir::Instruction* local = program.GetInstruction(instruction->name());
    ASSERT_NE(local, nullptr) << instruction->name();
    EXPECT_EQ(local->shape(), Local(instruction->shape(), strategy.output[0], mesh))
        << instruction->name() << " " << sharding::ToString(strategy.output[0]);
    ++checked;
  }
  EXPECT_GT(checked, 20);
  // The result: one leaf per original leaf, each in its announced layout.
  const std::vector<ShardingSpec> result_specs =
      ResultSpecs(original, solution, partitioned.options);
  const ir::Shape& result = program.root()->shape();
  ASSERT_EQ(result.tuple_size(), original.root()->shape().tuple_size());
  for (int64_t i = 0; i < result.tuple_size(); ++i) {
    EXPECT_EQ(result.tuple_shape(i), Local(original.root()->shape().tuple_shape(i),
                                           result_specs[static_cast<size_t>(i)], mesh))
        << "result element " << i;
  }
  // The collectives are those the cost model priced: count per kind and bytes.
  const CollectiveStats stats = CountCollectives(program);
  const sharding::CommunicationSummary& priced = solution.estimate.communication;
  EXPECT_EQ(stats.count, priced.count) << ToString(stats) << Describe(planned);
  EXPECT_EQ(stats.bytes, priced.bytes) << ToString(stats) << Describe(planned);
  ::testing::Test::RecordProperty("collectives", ToString(stats));
}

TEST(PartitionerTest, DataParallelMlpStep) {
  const std::vector<int64_t> mesh = {4};
  const Planned planned = PlanMlp(64, 32, mesh, /*force_batch_axis=*/0);
  EXPECT_EQ(ParameterSpec(planned, "x"), "[S0,R]") << Describe(planned);
  const Partitioned partitioned = Partition(planned, mesh);
  ExpectPartitionedLikeThePlan(planned, partitioned, mesh);
  ASSERT_NE(partitioned.module, nullptr);
  const ir::Computation& program = *partitioned.module->entry();
  EXPECT_EQ(program.GetInstruction("x")->shape().dims(), (std::vector<int64_t>{16, 32}));
  // The gradients are reduced over the mesh: all-reduces (or reduce-scatters) of weight size.
  const CollectiveStats stats = CountCollectives(program);
  EXPECT_GT(stats.count.size(), 0u) << ToString(stats);
  EXPECT_EQ(stats.count.count(cost::CollectiveKind::kAllToAll), 0u) << ToString(stats);
  EXPECT_EQ(partitioned.module->config().num_partitions, 4);
}

TEST(PartitionerTest, MegatronLikeMlpStep) {
  const std::vector<int64_t> mesh = {4};
  const Planned planned = PlanMlp(8, 1024, mesh, /*force_batch_axis=*/-1);
  EXPECT_NE(ParameterSpec(planned, "layer0.w"), "[R,R]") << Describe(planned);
  const Partitioned partitioned = Partition(planned, mesh);
  ExpectPartitionedLikeThePlan(planned, partitioned, mesh);
  ASSERT_NE(partitioned.module, nullptr);
  const CollectiveStats stats = CountCollectives(*partitioned.module->entry());
  EXPECT_GT(stats.bytes, 0);
  // Megatron's activations move, never a whole weight (4 MiB).
  EXPECT_LT(stats.bytes, 1024 * 1024 * 4) << ToString(stats) << Describe(planned);
}

// On a one-device mesh the program is the original, instruction for instruction (names aside):
// every layout is replicated and nothing is communicated.
TEST(PartitionerTest, OneDeviceMeshGivesTheOriginalProgram) {
  const std::vector<int64_t> mesh = {1};
  const Planned planned = PlanMlp(16, 32, mesh, -1);
  const Partitioned partitioned = Partition(planned, mesh);
  ASSERT_NE(partitioned.module, nullptr);
  const std::vector<ir::Instruction*> a = planned.module->entry()->MakePostOrder();
  const std::vector<ir::Instruction*> b = partitioned.module->entry()->MakePostOrder();
  ASSERT_EQ(a.size(), b.size());
  std::map<const ir::Instruction*, size_t> index_a, index_b;
  for (size_t i = 0; i < a.size(); ++i) {
    index_a[a[i]] = i;
    index_b[b[i]] = i;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->opcode(), b[i]->opcode()) << a[i]->name();
    EXPECT_TRUE(a[i]->shape().Compatible(b[i]->shape())) << a[i]->name();
    ASSERT_EQ(a[i]->operand_count(), b[i]->operand_count()) << a[i]->name();
    for (int64_t o = 0; o < a[i]->operand_count(); ++o) {
      EXPECT_EQ(index_a.at(a[i]->operand(o)), index_b.at(b[i]->operand(o))) << a[i]->name();
    }
    EXPECT_EQ(a[i]->attributes().dimensions, b[i]->attributes().dimensions) << a[i]->name();
    EXPECT_EQ(a[i]->attributes().literal, b[i]->attributes().literal) << a[i]->name();
  }
  EXPECT_TRUE(CountCollectives(*partitioned.module->entry()).count.empty());
}

// An op the partitioner cannot run is never offered a strategy it could price: a collective of
// an already partitioned module is refused when planned, and priced replicated only on request
// (--replicate-unknown-ops), when partitioning then names it.
TEST(PartitionerTest, AnOpWithoutHandlerIsNamed) {
  ir::ModuleBuilder mb("partitioned");
  ir::ComputationBuilder b = mb.NewComputation("main");
  ir::Instruction* x = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {8, 8}), "x");
  ir::Instruction* sum = b.AllReduce(x, mb.ScalarReducer(ir::Opcode::kAdd, ir::DType::kF32), {});
  Result<ir::Computation*> main = b.Build(b.Add(x, sum));
  ASSERT_TRUE(main.ok()) << b.status().message();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*main);
  ASSERT_TRUE(module.ok());
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x4");
  ASSERT_TRUE(cluster.ok());
  const cluster::LogicalMesh mesh = sharding::testing::WholeMesh(*cluster, {4});
  Result<sharding::ShardingSolution> refused =
      sharding::AutoShard(*(*module)->entry(), *cluster, mesh, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("the SPMD partitioner cannot run"), std::string::npos)
      << refused.status().message();
  sharding::AutoShardingOptions priced;
  priced.strategy.replicate_unknown_ops = true;
  Result<sharding::ShardingSolution> solution =
      sharding::AutoShard(*(*module)->entry(), *cluster, mesh, priced);
  ASSERT_TRUE(solution.ok()) << solution.status().message();
  Result<std::unique_ptr<ir::Module>> program =
      PartitionComputation(*(*module)->entry(), *solution, {4});
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("%" + sum->name() + " (all-reduce)"), std::string::npos)
      << program.status().message();
}

TEST(PartitionerTest, ASolutionForAnotherComputationIsRefused) {
  const std::vector<int64_t> mesh = {4};
  const Planned planned = PlanMlp(64, 32, mesh, 0);
  const Planned other = PlanMlp(64, 32, mesh, 0);
  Result<std::unique_ptr<ir::Module>> program =
      PartitionComputation(*other.module->entry(), planned.solution, mesh);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("another computation"), std::string::npos);
}

}  // namespace
}  // namespace alpa::spmd
