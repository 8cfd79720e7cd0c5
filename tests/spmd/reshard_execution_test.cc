// Reshardings lowered by spmd/reshard.h and run on in-process devices: each device's tile of a
// known value in one layout becomes its tile in another, and the collectives emitted are the
// ones the cost model priced (EmitReshard checks that itself and fails otherwise).
#include <gtest/gtest.h>

#include <vector>

#include "ir/builder.h"
#include "runtime/spmd_executor.h"
#include "spmd/collective_stats.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"
#include "spmd/reshard.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes) {
  return ShardingSpec{std::move(dim_axes), {}};
}

// Splits an iota-valued f32[4,6,2] by `from`, reshards on the devices to `to` and checks every
// device's tile against the value split by `to`. Returns the program's collectives.
CollectiveStats ExpectReshard(const ShardingSpec& from, const ShardingSpec& to,
                              const std::vector<int64_t>& mesh) {
  const ir::Shape global = ir::Shape::Array(ir::DType::kF32, {4, 6, 2});
  ir::Literal value = ir::Literal::CreateZeros(global);
  for (int64_t i = 0; i < value.element_count(); ++i) value.SetDouble(i, static_cast<double>(i));
  Result<std::vector<ir::Literal>> from_tiles = SplitLiteral(value, from, mesh);
  Result<std::vector<ir::Literal>> to_tiles = SplitLiteral(value, to, mesh);
  EXPECT_TRUE(from_tiles.ok() && to_tiles.ok());
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
  for (size_t d = 0; d < outputs->size(); ++d) {
    EXPECT_EQ((*outputs)[d][0], (*to_tiles)[d]) << "device " << d;
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

}  // namespace
}  // namespace alpa::spmd
