// Cross-mesh resharding (spmd/cross_mesh.h) run on in-process devices
// (runtime/pipeline_executor.h): every pair of layouts of an f32[8,8,4] value, pending sums
// included, between meshes of shapes (1,2), (2,1), (2,2) and (1,4) on disjoint devices arrives
// whole, sent directly or on Alpa's local all-gather route, and what crossed between devices is
// what the plan counted and what the planner prices (sharding/local_all_gather.h); three
// replicas of an 8-row tile take the route in uneven chunks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/mesh.h"
#include "cluster/presets.h"
#include "runtime/pipeline_executor.h"
#include "sharding/local_all_gather.h"
#include "sharding/sharding_spec.h"
#include "spmd/cross_mesh.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"
#include "tests/sharding/all_specs.h"

namespace alpa::spmd {
namespace {

using runtime::PipelineInstruction;

const ir::Shape kValue = ir::Shape::Array(ir::DType::kF32, {8, 8, 4});

ir::Literal Counting() {
  std::vector<double> values(static_cast<size_t>(kValue.ElementCount()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 97) - 40;
  return ir::Literal::FromDoubles(kValue, values);
}

// The layouts an f32[8,8,4] value may take on `mesh` (each dimension's tiles dividing it).
std::vector<sharding::ShardingSpec> Layouts(const std::vector<int64_t>& mesh) {
  std::vector<sharding::ShardingSpec> layouts;
  for (const sharding::ShardingSpec& spec : sharding::AllSpecs(2, 3, true)) {
    if (!sharding::CheckSpec(spec, mesh, kValue.dims()).ok()) continue;
    if (LocalShape(kValue, spec, mesh, "value").ok()) layouts.push_back(spec);
  }
  return layouts;
}

// Runs `plan` from `tiles` on devices 0.. (the sender) to the devices after them; returns the
// receiver's tiles and the bytes sent between devices.
std::vector<ir::Literal> Move(const CrossMeshPlan& plan, const MeshPlacement& from,
                              const MeshPlacement& to, std::vector<ir::Literal> tiles,
                              runtime::DeviceThreads& threads, int64_t& sent) {
  const size_t senders = from.devices.size(), receivers = to.devices.size();
  std::vector<runtime::PipelineDevice> devices(senders + receivers);
  std::vector<std::vector<ir::Literal>> slots(devices.size());
  const ir::Shape tile = LocalShape(kValue, to.spec, to.mesh_shape, "value").value();
  for (size_t d = 0; d < devices.size(); ++d) {
    devices[d].device = static_cast<int64_t>(d);
    devices[d].slot_count = 1;
    if (d < senders) {
      slots[d].push_back(std::move(tiles[d]));
      continue;
    }
    PipelineInstruction zeros;
    zeros.kind = PipelineInstruction::Kind::kZeros;
    zeros.slot = 0;
    zeros.tile = tile;
    devices[d].instructions.push_back(zeros);
  }
  for (size_t i = 0; i < plan.pieces.size(); ++i) {
    const TilePiece& piece = plan.pieces[i];
    PipelineInstruction send;
    send.kind = PipelineInstruction::Kind::kSend;
    send.slot = 0;
    send.peer = to.devices[static_cast<size_t>(piece.target)];
    send.tag = static_cast<int64_t>(i);
    send.box = {piece.source_start, piece.sizes};
    devices[static_cast<size_t>(from.devices[static_cast<size_t>(piece.source)])]
        .instructions.push_back(send);
    PipelineInstruction receive = send;
    receive.kind = PipelineInstruction::Kind::kReceive;
    receive.peer = from.devices[static_cast<size_t>(piece.source)];
    receive.box = {piece.target_start, piece.sizes};
    receive.tile = tile;
    receive.add = !from.spec.partial_axes.empty();
    devices[static_cast<size_t>(send.peer)].instructions.push_back(receive);
  }
  // Each replica hands its chunk on once it has it, then takes the others' (as
  // api/pipeline_lowering.cc orders them).
  for (const bool hand_on : {true, false}) {
    for (size_t i = 0; i < plan.gather_pieces.size(); ++i) {
      const TilePiece& piece = plan.gather_pieces[i];
      PipelineInstruction instruction;
      instruction.kind =
          hand_on ? PipelineInstruction::Kind::kSend : PipelineInstruction::Kind::kReceive;
      instruction.slot = 0;
      instruction.peer = to.devices[static_cast<size_t>(hand_on ? piece.target : piece.source)];
      instruction.tag = static_cast<int64_t>(plan.pieces.size() + i);
      instruction.box = {piece.source_start, piece.sizes};
      instruction.tile = tile;
      const int64_t device = to.devices[static_cast<size_t>(hand_on ? piece.source : piece.target)];
      devices[static_cast<size_t>(device)].instructions.push_back(instruction);
    }
  }
  runtime::PipelineRunOptions options;
  options.threads = &threads;
  Result<std::vector<runtime::PipelineProfile>> run = runtime::RunPipeline(devices, slots, options);
  EXPECT_TRUE(run.ok()) << run.status().message();
  sent = 0;
  std::vector<ir::Literal> received;
  if (!run.ok()) return received;
  for (const runtime::PipelineProfile& profile : *run) sent += profile.sent_bytes;
  for (size_t d = senders; d < devices.size(); ++d) received.push_back(std::move(slots[d][0]));
  return received;
}

// `plan`, moving a value that is a sum of `terms` terms on its sender into `to`, moves what the
// planner prices for it.
void ExpectPriced(const CrossMeshPlan& plan, const ir::Shape& value, const MeshPlacement& to,
                  int64_t terms, const std::string& what) {
  const cluster::ClusterSpec cluster =
      cluster::ParseClusterArgument(fmt::format("local:{}", DeviceCount(to.mesh_shape))).value();
  const cluster::LogicalMesh mesh =
      cluster::MakeLogicalMesh(cluster, cluster::WholeClusterMesh(cluster), to.mesh_shape).value();
  Result<sharding::ReceivedTransfer> priced =
      sharding::PriceReceivedTransfer(value, to.spec, cluster, mesh, terms);
  ASSERT_TRUE(priced.ok()) << what << ": " << priced.status().message();
  EXPECT_EQ(priced->between_meshes_bytes, plan.bytes_between_meshes) << what;
  EXPECT_EQ(priced->within_receiver_bytes, plan.bytes_within_receiver) << what;
  EXPECT_EQ(priced->gather_s > 0, plan.bytes_within_receiver > 0) << what;
}

class CrossMeshTest
    : public ::testing::TestWithParam<std::tuple<std::vector<int64_t>, std::vector<int64_t>>> {};

// With the all-gather route, each distinct tile of the receiver crosses between the meshes once:
// the value's bytes, times the terms of a pending sum on the sender (each term is sent). That is
// what the planner prices for a boundary (a sent value is never a pending sum there).
TEST_P(CrossMeshTest, EveryPairOfLayoutsArrivesWhole) {
  const auto& [from_mesh, to_mesh] = GetParam();
  const ir::Literal value = Counting();
  const int64_t senders = DeviceCount(from_mesh), receivers = DeviceCount(to_mesh);
  runtime::DeviceThreads threads(senders + receivers);
  MeshPlacement from{from_mesh, {}, {}}, to{to_mesh, {}, {}};
  for (int64_t d = 0; d < senders; ++d) from.devices.push_back(d);
  for (int64_t d = 0; d < receivers; ++d) to.devices.push_back(senders + d);
  int64_t pairs = 0, routed = 0;
  for (const sharding::ShardingSpec& from_spec : Layouts(from_mesh)) {
    for (const sharding::ShardingSpec& to_spec : Layouts(to_mesh)) {
      from.spec = from_spec;
      to.spec = to_spec;
      int64_t terms = 1;
      for (int64_t axis : from_spec.partial_axes) terms *= from_mesh[static_cast<size_t>(axis)];
      for (const bool all_gather : {true, false}) {
        const std::string what = sharding::ToString(from_spec) + " -> " +
                                 sharding::ToString(to_spec) + (all_gather ? "" : " (direct)");
        Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to, {all_gather});
        ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().message();
        int64_t sent = 0;
        const std::vector<ir::Literal> tiles =
            Move(*plan, from, to, SplitLiteral(value, from_spec, from_mesh).value(), threads, sent);
        ASSERT_EQ(static_cast<int64_t>(tiles.size()), receivers) << what;
        Result<ir::Literal> whole = AssembleLiteral(tiles, to_spec, to_mesh, kValue);
        ASSERT_TRUE(whole.ok()) << what << ": " << whole.status().message();
        EXPECT_EQ(*whole, value) << what;
        EXPECT_EQ(sent, plan->bytes_between_devices) << what;
        EXPECT_EQ(plan->bytes_between_devices,
                  plan->bytes_between_meshes + plan->bytes_within_receiver)
            << what;
        if (all_gather) {
          EXPECT_EQ(plan->bytes_between_meshes, terms * kValue.ByteSize()) << what;
          routed += plan->gather_pieces.empty() ? 0 : 1;
          ExpectPriced(*plan, kValue, to, terms, what);
        } else {
          EXPECT_TRUE(plan->gather_pieces.empty()) << what;
        }
      }
      ++pairs;
    }
  }
  EXPECT_GT(pairs, 16);
  // Every receiving mesh has layouts that replicate a tile, and those take the route.
  EXPECT_GT(routed, 0);
}

// A receiver that holds each of its tiles once gets every element once: with neither side
// replicated nor partial, the bytes moved are the value's.
TEST(CrossMeshPlanTest, SplitToSplitMovesTheValueOnce) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::SplitDim(3, 0, {1}), {0, 1}};
  MeshPlacement to{{2, 2}, sharding::ShardingSpec::SplitDim(3, 1, {0, 1}), {2, 3, 4, 5}};
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->bytes_between_devices, kValue.ByteSize());
  EXPECT_EQ(plan->pieces.size(), 8u);  // each receiver's tile meets both senders' tiles
}

// Replicas share the sending: two replicas of the source, two receivers of the whole value.
TEST(CrossMeshPlanTest, ReplicasShareTheSending) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::Replicated(3), {0, 1}};
  MeshPlacement to{{2, 1}, sharding::ShardingSpec::Replicated(3), {2, 3}};
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->pieces.size(), 2u);
  EXPECT_NE(plan->pieces[0].source, plan->pieces[1].source);
}

// A value replicated on both meshes: sent directly, each receiver gets it whole (twice the bytes
// between the meshes); on the all-gather route each gets half and hands it to the other.
TEST(CrossMeshPlanTest, ReplicasOfTheReceiverAllGatherInsideTheirMesh) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::Replicated(3), {0, 1}};
  MeshPlacement to{{2, 1}, sharding::ShardingSpec::Replicated(3), {2, 3}};
  Result<CrossMeshPlan> direct = PlanCrossMeshTransfer(kValue, from, to, {false});
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->bytes_between_meshes, 2 * kValue.ByteSize());
  Result<CrossMeshPlan> routed = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_TRUE(routed.ok());
  EXPECT_EQ(routed->bytes_between_meshes, kValue.ByteSize());
  EXPECT_EQ(routed->bytes_within_receiver, kValue.ByteSize());
  ASSERT_EQ(routed->pieces.size(), 2u);
  EXPECT_EQ(routed->pieces[0].sizes, (std::vector<int64_t>{4, 8, 4}));  // cut along dimension 0
  EXPECT_EQ(routed->pieces[1].target_start, (std::vector<int64_t>{4, 0, 0}));
  ASSERT_EQ(routed->gather_pieces.size(), 2u);
  EXPECT_EQ(routed->gather_pieces[0], (TilePiece{0, 1, {0, 0, 0}, {0, 0, 0}, {4, 8, 4}}));
}

// Three replicas of a tile of 8 rows (an uneven stage of 3 devices): the route still sends it
// across once, in chunks of 3, 3 and 2 rows, and every replica ends with the whole value.
TEST(CrossMeshPlanTest, ReplicasThatDoNotDivideTheTileTakeChunksOneRowApart) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::SplitDim(3, 1, {1}), {0, 1}};
  MeshPlacement to{{1, 3}, sharding::ShardingSpec::Replicated(3), {2, 3, 4}};
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->bytes_between_meshes, kValue.ByteSize());
  std::vector<int64_t> rows;
  for (const TilePiece& piece : plan->pieces) {
    if (piece.source == 0) rows.push_back(piece.sizes[0]);  // the half from the first sender
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{3, 3, 2}));
  runtime::DeviceThreads threads(5);
  int64_t sent = 0;
  const ir::Literal value = Counting();
  const std::vector<ir::Literal> tiles =
      Move(*plan, from, to, SplitLiteral(value, from.spec, from.mesh_shape).value(), threads, sent);
  ASSERT_EQ(tiles.size(), 3u);
  for (const ir::Literal& tile : tiles) EXPECT_EQ(tile, value);
  EXPECT_EQ(sent, plan->bytes_between_devices);
}

// A tile with no dimension of as many rows as it has replicas cannot be cut into chunks: each
// replica receives it whole across the meshes, and the planner prices that.
TEST(CrossMeshPlanTest, ATileWithTooFewRowsForItsReplicasIsSentToEach) {
  const ir::Shape small = ir::Shape::Array(ir::DType::kF32, {2, 2});
  MeshPlacement from{{1, 1}, sharding::ShardingSpec::Replicated(2), {0}};
  MeshPlacement to{{1, 3}, sharding::ShardingSpec::Replicated(2), {1, 2, 3}};
  EXPECT_EQ(sharding::LocalAllGatherDimension(small.dims(), 3), -1);
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(small, from, to);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->bytes_between_meshes, 3 * small.ByteSize());
  EXPECT_TRUE(plan->gather_pieces.empty());
  ExpectPriced(*plan, small, to, 1, "f32[2,2] onto 3 replicas");
}

// A layout the planner is asked to price that does not fit the value is named, not priced.
TEST(CrossMeshPlanTest, APricedLayoutThatDoesNotFitIsNamed) {
  const cluster::ClusterSpec cluster = cluster::ParseClusterArgument("local:2").value();
  const cluster::LogicalMesh mesh =
      cluster::MakeLogicalMesh(cluster, cluster::WholeClusterMesh(cluster), {2}).value();
  Result<sharding::ReceivedTransfer> priced =
      sharding::PriceReceivedTransfer(kValue, sharding::ShardingSpec::Replicated(2), cluster, mesh);
  ASSERT_FALSE(priced.ok());
  EXPECT_NE(priced.status().message().find("dimension"), std::string::npos)
      << priced.status().message();
}

// Where the receivers already hold the value (the same devices), sending moves nothing, and the
// route, which would, is not taken.
TEST(CrossMeshPlanTest, TheRouteIsTakenOnlyWhereItMovesFewerBytes) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::Replicated(3), {0, 1}};
  MeshPlacement to{{2, 1}, sharding::ShardingSpec::Replicated(3), {0, 1}};
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->bytes_between_devices, 0);
  EXPECT_TRUE(plan->gather_pieces.empty());
}

TEST(CrossMeshPlanTest, ALayoutThatDoesNotFitIsNamed) {
  MeshPlacement from{{1, 2}, sharding::ShardingSpec::SplitDim(3, 2, {1}), {0}};
  MeshPlacement to{{2, 1}, sharding::ShardingSpec::Replicated(3), {2, 3}};
  Result<CrossMeshPlan> plan = PlanCrossMeshTransfer(kValue, from, to);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("from: 1 devices listed for a mesh of 2"),
            std::string::npos)
      << plan.status().message();
}

const std::vector<std::vector<int64_t>> kMeshes = {{1, 2}, {2, 1}, {2, 2}, {1, 4}};
INSTANTIATE_TEST_SUITE_P(Meshes, CrossMeshTest,
                         ::testing::Combine(::testing::ValuesIn(kMeshes),
                                            ::testing::ValuesIn(kMeshes)));

}  // namespace
}  // namespace alpa::spmd
