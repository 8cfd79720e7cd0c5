#include "sharding/resharding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <utility>

#include "cluster/presets.h"
#include "cost/mesh_collective.h"
#include "tests/sharding/all_specs.h"

namespace alpa::sharding {

void PrintTo(const ReshardStep& step, std::ostream* os) { *os << ToString(step); }

namespace {

using cost::CollectiveKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes, std::vector<int64_t> partial = {}) {
  return ShardingSpec{std::move(dim_axes), std::move(partial)};
}

const std::vector<int64_t> kMesh = {2, 4};
const std::vector<int64_t> kDims = {16, 32};  // f32: 2048 bytes
constexpr int64_t kF32 = 4;

std::vector<ReshardStep> Plan(const ShardingSpec& from, const ShardingSpec& to) {
  return PlanReshard(from, to, kMesh, kDims, kF32);
}

ReshardStep Step(CollectiveKind kind, std::vector<int64_t> axes, int64_t bytes) {
  return {kind, std::move(axes), bytes};
}

TEST(PlanReshardTest, GatherOfASplitIsOneAllGatherOfTheWholeTensor) {
  EXPECT_THAT(Plan(Spec({{0}, {}}), Spec({{}, {}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {0}, 2048)));
}

TEST(PlanReshardTest, StepsPrint) {
  EXPECT_EQ(ToString(Step(CollectiveKind::kAllGather, {0, 1}, 2048)),
            "all-gather over axes {0,1}: 2048 B");
}

TEST(PlanReshardTest, PartialToSplitIsAReduceScatterOfItsInput) {
  EXPECT_THAT(Plan(Spec({{}, {}}, {1}), Spec({{}, {1}})),
              ElementsAre(Step(CollectiveKind::kReduceScatter, {1}, 2048)));
}

TEST(PlanReshardTest, MovingASplitToAnotherDimensionIsAnAllToAllOfTheShard) {
  EXPECT_THAT(Plan(Spec({{0}, {}}), Spec({{}, {0}})),
              ElementsAre(Step(CollectiveKind::kAllToAll, {0}, 1024)));
}

TEST(PlanReshardTest, IdenticalSpecsAndSlicesNeedNoStep) {
  for (const ShardingSpec& spec : AllSpecs(2, 2, /*with_partial=*/true)) {
    EXPECT_THAT(Plan(spec, spec), IsEmpty()) << ToString(spec);
    if (spec.partial_axes.empty()) {
      EXPECT_THAT(Plan(Spec({{}, {}}), spec), IsEmpty()) << ToString(spec);
    }
  }
}

TEST(PlanReshardTest, MovesToPartialAreLocal) {
  EXPECT_THAT(Plan(Spec({{}, {}}), Spec({{}, {}}, {0, 1})), IsEmpty());
  EXPECT_THAT(Plan(Spec({{0}, {1}}), Spec({{}, {}}, {0, 1})), IsEmpty());
}

TEST(PlanReshardTest, AxesWithTheSameCollectiveAreOneCollective) {
  EXPECT_THAT(Plan(Spec({{0}, {1}}), Spec({{}, {}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {0, 1}, 2048)));
  EXPECT_THAT(Plan(Spec({{}, {}}, {0, 1}), Spec({{}, {}})),
              ElementsAre(Step(CollectiveKind::kAllReduce, {0, 1}, 2048)));
}

// Only the minor end of a dimension's axes can be gathered in place; [S01] -> [S0] gathers
// axis 1 into tiles of half the tensor.
TEST(PlanReshardTest, TheCommonPrefixOfADimensionStays) {
  EXPECT_THAT(Plan(Spec({{0, 1}, {}}), Spec({{0}, {}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {1}, 1024)));
}

// Where the direct steps would leave the tiles in another order (a permutation among devices),
// the leaving axes are gathered and the entering ones sliced, and that is what is priced.
TEST(PlanReshardTest, PermutedTilesAreGatheredAndSliced) {
  // [S01] -> [S1]: axis 0 leaves from under axis 1.
  EXPECT_EQ(ChooseReshardRoute(Spec({{0, 1}, {}}), Spec({{1}, {}}), kMesh),
            ReshardRoute::kGatherAndSlice);
  EXPECT_THAT(Plan(Spec({{0, 1}, {}}), Spec({{1}, {}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {0, 1}, 2048)));
  // [S01] -> [S10]: both axes stay on the dimension in the other order.
  EXPECT_THAT(Plan(Spec({{0, 1}, {}}), Spec({{1, 0}, {}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {0, 1}, 2048)));
  // [S0,S1] -> [S1,S0]: all-to-alls in both directions between two dimensions.
  EXPECT_THAT(Plan(Spec({{0}, {1}}), Spec({{1}, {0}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {0, 1}, 2048)));
  // A pending sum that ends is all-reduced first, on the smaller shard. [R,S1] P0 -> [S10,R]:
  // the reduce-scatter would put axis 0 on dimension 0 before axis 1 arrives. [S1,R] P0 ->
  // [S10,R] scatters onto the minor end, directly.
  EXPECT_EQ(ChooseReshardRoute(Spec({{}, {1}}, {0}), Spec({{1, 0}, {}}), kMesh),
            ReshardRoute::kGatherAndSlice);
  EXPECT_EQ(ChooseReshardRoute(Spec({{1}, {}}, {0}), Spec({{1, 0}, {}}), kMesh),
            ReshardRoute::kDirect);
  EXPECT_THAT(Plan(Spec({{}, {1}}, {0}), Spec({{1, 0}, {}})),
              ElementsAre(Step(CollectiveKind::kAllReduce, {0}, 512),
                          Step(CollectiveKind::kAllGather, {1}, 2048)));
  // Axes of size 1 cut nothing, so they never force the detour: on a (1, 8) mesh [S01] -> [S1]
  // keeps its tiles.
  EXPECT_EQ(ChooseReshardRoute(Spec({{0, 1}, {}}), Spec({{1}, {}}), {1, 8}), ReshardRoute::kDirect);
  EXPECT_THAT(PlanReshard(Spec({{0, 1}, {}}), Spec({{1}, {}}), {1, 8}, kDims, kF32), IsEmpty());
}

// Slices come first and reductions before the all-to-all and the gather, so every buffer is as
// small as it can be.
TEST(PlanReshardTest, StepsRunInTheOrderThatKeepsBuffersSmall) {
  // Slice axis 1 (dim 1), then all-reduce over axis 0 of a quarter of the tensor.
  EXPECT_THAT(Plan(Spec({{}, {}}, {0}), Spec({{}, {1}})),
              ElementsAre(Step(CollectiveKind::kAllReduce, {0}, 512)));
  // Reduce-scatter over axis 0 of the whole tensor, then all-reduce over axis 1 of the half.
  EXPECT_THAT(Plan(Spec({{}, {}}, {0, 1}), Spec({{0}, {}})),
              ElementsAre(Step(CollectiveKind::kReduceScatter, {0}, 2048),
                          Step(CollectiveKind::kAllReduce, {1}, 1024)));
  // All-to-all over axis 1 on the 1/8 shard, then all-gather over axis 0 back to a quarter.
  EXPECT_THAT(Plan(Spec({{0, 1}, {}}), Spec({{}, {1}})),
              ElementsAre(Step(CollectiveKind::kAllToAll, {1}, 256),
                          Step(CollectiveKind::kAllGather, {0}, 512)));
  // Unless the all-to-all would land on top of the axis to gather: [S0,S1] -> [R,S0] gathers
  // axis 1 first (a half), then moves axis 0 over the half.
  EXPECT_EQ(ChooseReshardRoute(Spec({{0}, {1}}), Spec({{}, {0}}), kMesh),
            ReshardRoute::kGatherFirst);
  EXPECT_THAT(Plan(Spec({{0}, {1}}), Spec({{}, {0}})),
              ElementsAre(Step(CollectiveKind::kAllGather, {1}, 1024),
                          Step(CollectiveKind::kAllToAll, {0}, 1024)));
}

TEST(PlanReshardTest, BytesCountThePaddedTiles) {
  // f32[3,5]: the [S0,R] shard is ceil(3/2) x 5 = 10 elements (the [R,S0] one 3 x 3); gathered,
  // 15.
  EXPECT_THAT(PlanReshard(Spec({{0}, {}}), Spec({{}, {0}}), kMesh, {3, 5}, kF32),
              ElementsAre(Step(CollectiveKind::kAllToAll, {0}, 40)));
  EXPECT_THAT(PlanReshard(Spec({{0}, {}}), Spec({{}, {}}), kMesh, {3, 5}, kF32),
              ElementsAre(Step(CollectiveKind::kAllGather, {0}, 60)));
}

TEST(PlanReshardTest, AxesOfSizeOneNeverCommunicate) {
  EXPECT_THAT(PlanReshard(Spec({{0}, {}}), Spec({{}, {0}}), {1, 8}, kDims, kF32), IsEmpty());
  EXPECT_THAT(PlanReshard(Spec({{}, {}}, {0}), Spec({{}, {}}), {1, 8}, kDims, kF32), IsEmpty());
}

// Two p3.16xlarge hosts of 4 V100s: axis 0 of the (2, 4) mesh crosses hosts, axis 1 does not.
struct TwoHosts {
  cluster::ClusterSpec spec = *cluster::MakePresetCluster("p3.16xlarge", 2, 4);
  ReshardCostModel Model(std::vector<int64_t> shape) const {
    auto mesh = cluster::MakeLogicalMesh(spec, cluster::WholeClusterMesh(spec), shape);
    EXPECT_TRUE(mesh.ok()) << mesh.status().ToString();
    auto model = ReshardCostModel::Create(spec, *mesh);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return *model;
  }
};

TEST(ReshardCostModelTest, PricesEachStepWithItsMeshAxesGroup) {
  TwoHosts c;
  const ReshardCostModel model = c.Model(kMesh);
  const auto mesh = *cluster::MakeLogicalMesh(c.spec, cluster::WholeClusterMesh(c.spec), kMesh);
  const auto group = *cost::MeshAxesGroup(c.spec, mesh, {0});
  const double expected =
      cost::EstimateCollective(CollectiveKind::kAllGather, 2048, group)->seconds;
  EXPECT_GT(expected, 0);
  EXPECT_DOUBLE_EQ(model.ReshardSeconds(Spec({{0}, {}}), Spec({{}, {}}), kDims, kF32), expected);
  EXPECT_DOUBLE_EQ(model.StepSeconds(Step(CollectiveKind::kAllGather, {0}, 2048)), expected);
  EXPECT_EQ(model.ReshardSeconds(Spec({{}, {}}), Spec({{0}, {1}}), kDims, kF32), 0);
}

// Over every pair of specs (partial ones included) of a rank-2 tensor: never negative, zero to
// itself, the fast path equals pricing the plan, and more bytes never cost less.
TEST(ReshardCostModelTest, PropertiesOverAllPairs) {
  TwoHosts c;
  const ReshardCostModel model = c.Model(kMesh);
  const std::vector<ShardingSpec> specs = AllSpecs(2, 2, /*with_partial=*/true);
  for (const ShardingSpec& a : specs) {
    EXPECT_EQ(model.ReshardSeconds(a, a, kDims, kF32), 0) << ToString(a);
    for (const ShardingSpec& b : specs) {
      const double seconds = model.ReshardSeconds(a, b, kDims, kF32);
      EXPECT_GE(seconds, 0) << ToString(a) << " -> " << ToString(b);
      EXPECT_DOUBLE_EQ(seconds, model.Seconds(PlanReshard(a, b, kMesh, kDims, kF32)))
          << ToString(a) << " -> " << ToString(b);
      EXPECT_LE(model.ReshardSeconds(a, b, kDims, 2), seconds)
          << ToString(a) << " -> " << ToString(b);
      EXPECT_LE(seconds, model.ReshardSeconds(a, b, {64, 32}, kF32))
          << ToString(a) << " -> " << ToString(b);
    }
  }
}

ShardingSpec SwapAxes(ShardingSpec spec) {
  auto swap = [](int64_t axis) { return axis == 0 ? 1 : axis == 1 ? 0 : axis; };
  for (auto& axes : spec.dim_axes) {
    for (int64_t& axis : axes) axis = swap(axis);
  }
  for (int64_t& axis : spec.partial_axes) axis = swap(axis);
  std::sort(spec.partial_axes.begin(), spec.partial_axes.end());
  return spec;
}

// On a (2, 2) mesh of two hosts of two devices, axis 0 crosses hosts and axis 1 does not: any
// resharding that communicates over axis 0 only costs at least its mirror over axis 1.
TEST(ReshardCostModelTest, CrossingHostsIsNeverCheaper) {
  TwoHosts c;
  c.spec = *cluster::MakePresetCluster("p3.16xlarge", 2, 2);
  const ReshardCostModel model = c.Model({2, 2});
  int compared = 0;
  for (const ShardingSpec& a : AllSpecs(2, 2, /*with_partial=*/true)) {
    for (const ShardingSpec& b : AllSpecs(2, 2, /*with_partial=*/true)) {
      const std::vector<ReshardStep> steps = PlanReshard(a, b, {2, 2}, kDims, kF32);
      const bool only_axis0 =
          !steps.empty() && std::all_of(steps.begin(), steps.end(),
                                        [](auto& s) { return s.axes == std::vector<int64_t>{0}; });
      if (!only_axis0) continue;
      ++compared;
      EXPECT_GE(model.ReshardSeconds(a, b, kDims, kF32),
                model.ReshardSeconds(SwapAxes(a), SwapAxes(b), kDims, kF32))
          << ToString(a) << " -> " << ToString(b);
    }
  }
  EXPECT_GT(compared, 10);
}

}  // namespace
}  // namespace alpa::sharding
