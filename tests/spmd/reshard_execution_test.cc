// Reshardings lowered by spmd/reshard.h and run on in-process devices: each device's tile of a
// known value in one layout becomes its tile in another (for a partial layout: the tiles sum to
// the value), and the collectives emitted are the ones the cost model priced (EmitReshard checks
// that itself and fails otherwise).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/spmd_executor.h"
#include "sharding/resharding.h"
#include "spmd/collective_stats.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"
#include "spmd/reshard.h"
#include "tests/sharding/all_specs.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes) {
  return ShardingSpec{std::move(dim_axes), {}};
}

// Splits an iota-valued array of `dims` by `from`, reshards on the devices to `to` and checks
// every device's tile against the value split by `to` (a partial `to`: the tiles assembled).
// Returns the program's collectives.
CollectiveStats ExpectReshard(const ShardingSpec& from, const ShardingSpec& to,
                              const std::vector<int64_t>& mesh,
                              const std::vector<int64_t>& dims = {4, 6, 2}) {
  const std::string what = sharding::ToString(from) + " -> " + sharding::ToString(to);
  const ir::Shape global = ir::Shape::Array(ir::DType::kF32, dims);
  ir::Literal value = ir::Literal::CreateZeros(global);
  for (int64_t i = 0; i < value.element_count(); ++i) value.SetDouble(i, static_cast<double>(i));
  Result<std::vector<ir::Literal>> from_tiles = SplitLiteral(value, from, mesh);
  Result<std::vector<ir::Literal>> to_tiles = SplitLiteral(value, to, mesh);
  EXPECT_TRUE(from_tiles.ok() && to_tiles.ok()) << what;
  if (!from_tiles.ok() || !to_tiles.ok()) return {};

  ir::ModuleBuilder module("reshard");
  ir::ComputationBuilder builder = module.NewComputation("main");
  SpmdBuilder s(module, builder, mesh);
  ir::Instruction* tile = builder.Parameter(0, (*from_tiles)[0].shape(), "x");
  Result<ir::Instruction*> resharded = EmitReshard(s, tile, from, to, global, "x");
  EXPECT_TRUE(resharded.ok()) << resharded.status().message();
  if (!resharded.ok()) return {};
  Result<ir::Computation*> entry = builder.Build(*resharded);
  EXPECT_TRUE(entry.ok()) << entry.status().message();
  module.module()->mutable_config().num_partitions = DeviceCount(mesh);
  Result<std::unique_ptr<ir::Module>> program = module.Build(*entry);
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return {};

  std::vector<std::vector<ir::Literal>> arguments;
  for (ir::Literal& t : *from_tiles) arguments.push_back({std::move(t)});
  Result<std::vector<std::vector<ir::Literal>>> outputs =
      runtime::RunSpmdProgram(**program, std::move(arguments));
  EXPECT_TRUE(outputs.ok()) << outputs.status().message();
  if (!outputs.ok()) return {};
  if (to.partial_axes.empty()) {
    for (size_t d = 0; d < outputs->size(); ++d) {
      EXPECT_EQ((*outputs)[d][0], (*to_tiles)[d]) << what << ", device " << d;
    }
  } else {
    std::vector<ir::Literal> locals;
    for (std::vector<ir::Literal>& output : *outputs) locals.push_back(std::move(output[0]));
    Result<ir::Literal> assembled = AssembleLiteral(locals, to, mesh, global);
    EXPECT_TRUE(assembled.ok() && *assembled == value) << what;
  }
  return CountCollectives(*(*program)->entry());
}

TEST(ReshardExecutionTest, AllGatherOfOneDimension) {
  const CollectiveStats stats = ExpectReshard(Spec({{0, 1}, {}, {}}), Spec({{}, {}, {}}), {2, 2});
  EXPECT_EQ(ToString(stats), "all-gather x1; 192 B");
}

// One all-gather over both axes (as the cost model prices it), its members' tiles rearranged
// into the two dimensions they split.
TEST(ReshardExecutionTest, AllGatherOfTwoDimensionsIsOneCollective) {
  EXPECT_EQ(ToString(ExpectReshard(Spec({{0}, {1}, {}}), Spec({{}, {}, {}}), {2, 2})),
            "all-gather x1; 192 B");
  EXPECT_EQ(ToString(ExpectReshard(Spec({{1}, {0}, {}}), Spec({{}, {}, {}}), {2, 2})),
            "all-gather x1; 192 B");
  EXPECT_EQ(ToString(ExpectReshard(Spec({{1}, {}, {0}}), Spec({{}, {}, {}}), {2, 2})),
            "all-gather x1; 192 B");
}

// Only the axes that leave: the other stays on its dimension.
TEST(ReshardExecutionTest, AllGatherKeepsTheAxesThatStay) {
  EXPECT_EQ(ToString(ExpectReshard(Spec({{0}, {1}, {}}), Spec({{0}, {}, {}}), {2, 2})),
            "all-gather x1; 96 B");
}

// Reshards every pair of `specs` and counts the pairs that took each route.
std::map<sharding::ReshardRoute, int> ExpectEveryPair(const std::vector<ShardingSpec>& specs,
                                                      const std::vector<int64_t>& mesh,
                                                      const std::vector<int64_t>& dims) {
  std::map<sharding::ReshardRoute, int> routes;
  for (const ShardingSpec& from : specs) {
    for (const ShardingSpec& to : specs) {
      ExpectReshard(from, to, mesh, dims);
      ++routes[sharding::ChooseReshardRoute(from, to, mesh)];
    }
  }
  return routes;
}

// Every pair of layouts of a rank-3 array on a (2, 2) mesh, pending sums and every axis order
// included, whichever route the cost model chose.
TEST(ReshardExecutionTest, EveryPairOfLayoutsOnATwoByTwoMesh) {
  const std::vector<ShardingSpec> specs = sharding::AllSpecs(2, 3, /*with_partial=*/true);
  ASSERT_EQ(specs.size(), 28u);
  std::map<sharding::ReshardRoute, int> routes = ExpectEveryPair(specs, {2, 2}, {4, 8, 4});
  EXPECT_GT(routes[sharding::ReshardRoute::kDirect], 0);
  EXPECT_GT(routes[sharding::ReshardRoute::kGatherFirst], 0);
  EXPECT_GT(routes[sharding::ReshardRoute::kGatherAndSlice], 0);
}

// The same on a (2, 2, 2) mesh for a rank-2 array, where three axes can order themselves in one
// dimension (pending sums left out: 12 s on 8 threads with them).
TEST(ReshardExecutionTest, EveryPairOfSplitLayoutsOnATwoByTwoByTwoMesh) {
  const std::vector<ShardingSpec> specs = sharding::AllSpecs(3, 2, /*with_partial=*/false);
  ASSERT_EQ(specs.size(), 49u);
  std::map<sharding::ReshardRoute, int> routes = ExpectEveryPair(specs, {2, 2, 2}, {8, 8});
  EXPECT_GT(routes[sharding::ReshardRoute::kGatherAndSlice], 0);
}

// An axis of size 1 in either layout changes nothing: [S01,R,R] -> [S1,R,R] on (1, 4) is no
// step, and [S10,R,R] -> [R,R,S01] on (4, 1) one all-to-all.
TEST(ReshardExecutionTest, AxesOfSizeOneAreIgnored) {
  EXPECT_EQ(ToString(ExpectReshard(Spec({{0, 1}, {}, {}}), Spec({{1}, {}, {}}), {1, 4})),
            "none; 0 B");
  EXPECT_EQ(
      ToString(ExpectReshard(Spec({{1, 0}, {}, {}}), Spec({{}, {}, {0, 1}}), {4, 1}, {4, 4, 4})),
      "all-to-all x1; 64 B");
}

}  // namespace
}  // namespace alpa::spmd
