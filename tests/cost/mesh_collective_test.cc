#include "cost/mesh_collective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/presets.h"

namespace alpa::cost {
namespace {

using ::testing::HasSubstr;

// Two p3.16xlarge hosts: 8 V100s each on NVLink (150 GB/s per device per direction, 5 us),
// 25 Gbps = 3.125e9 B/s per host between them (25 us).
struct TwoHosts {
  cluster::ClusterSpec spec = *cluster::MakePresetCluster("p3.16xlarge", 2, std::nullopt);
  cluster::LogicalMesh mesh =
      *cluster::MakeLogicalMesh(spec, cluster::WholeClusterMesh(spec), {2, 8});
};

void ExpectLevel(const LinkLevel& level, int64_t size, double latency, double bandwidth) {
  EXPECT_EQ(level.size, size);
  EXPECT_DOUBLE_EQ(level.latency_s, latency);
  EXPECT_DOUBLE_EQ(level.bandwidth_bytes_per_s, bandwidth);
}

TEST(MeshCollectiveTest, AxisInsideAHostUsesTheDeviceLinks) {
  TwoHosts c;
  Result<CollectiveGroup> group = MeshAxesGroup(c.spec, c.mesh, {1});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ASSERT_EQ(group->levels.size(), 1u);
  ExpectLevel(group->levels[0], 8, c.spec.hosts[0].intra_host.latency,
              c.spec.hosts[0].intra_host.bandwidth);
}

// A host's measured figures for a kind reach the group's device level as that kind's; over
// hosts with different ones, the slowest (least bandwidth, most latency) of those it touches.
TEST(MeshCollectiveTest, AKindsOwnLinkFiguresAreTheSlowestOfTheHosts) {
  TwoHosts c;
  c.spec.hosts[0].intra_host.collectives["all-gather"] = {.bandwidth = 4e10, .latency = 2e-6};
  c.spec.hosts[1].intra_host.collectives["all-gather"] = {.bandwidth = 6e10, .latency = 3e-6};
  constexpr auto kAllGather = static_cast<size_t>(CollectiveKind::kAllGather);
  Result<CollectiveGroup> inside = MeshAxesGroup(c.spec, c.mesh, {1});
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  EXPECT_EQ(inside->levels[0].measured[kAllGather],
            (cluster::LinkFigures{.bandwidth = 4e10, .latency = 2e-6}));
  EXPECT_FALSE(inside->levels[0].measured[static_cast<size_t>(CollectiveKind::kAllReduce)]);
  Result<CollectiveGroup> both = MeshAxesGroup(c.spec, c.mesh, {0, 1});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->levels[0].measured[kAllGather],
            (cluster::LinkFigures{.bandwidth = 4e10, .latency = 3e-6}));
  EXPECT_FALSE(both->levels[1].measured[kAllGather]);  // the network has no such figures
}

// Axis 0 pairs device d of host 0 with device d of host 1: eight such groups share each host's
// NIC, so each gets 1/8 of it.
TEST(MeshCollectiveTest, AxisAcrossHostsSharesTheNicWithTheOtherGroups) {
  TwoHosts c;
  Result<CollectiveGroup> group = MeshAxesGroup(c.spec, c.mesh, {0});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ASSERT_EQ(group->levels.size(), 2u);
  EXPECT_EQ(group->levels[0].size, 1);
  ExpectLevel(group->levels[1], 2, c.spec.inter_host.latency, c.spec.inter_host.bandwidth / 8);
}

TEST(MeshCollectiveTest, BothAxesMakeAHierarchyWithTheWholeNic) {
  TwoHosts c;
  Result<CollectiveGroup> group = MeshAxesGroup(c.spec, c.mesh, {0, 1});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ASSERT_EQ(group->levels.size(), 2u);
  ExpectLevel(group->levels[0], 8, c.spec.hosts[0].intra_host.latency,
              c.spec.hosts[0].intra_host.bandwidth);
  ExpectLevel(group->levels[1], 2, c.spec.inter_host.latency, c.spec.inter_host.bandwidth);
}

// The point of the mapping: the same all-reduce is far cheaper over the axis inside a host than
// over the axis across hosts, and a 1-D mesh of all 16 devices costs what the 2-D one's two axes
// together cost.
TEST(MeshCollectiveTest, CrossingHostsCostsMore) {
  TwoHosts c;
  const int64_t bytes = int64_t{1} << 30;
  auto all_reduce = [&](const cluster::LogicalMesh& mesh, std::vector<int64_t> axes) {
    Result<CollectiveGroup> group = MeshAxesGroup(c.spec, mesh, axes);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return EstimateCollective(CollectiveKind::kAllReduce, bytes, *group)->seconds;
  };
  EXPECT_LT(all_reduce(c.mesh, {1}), all_reduce(c.mesh, {0}));
  const cluster::LogicalMesh flat =
      *cluster::MakeLogicalMesh(c.spec, cluster::WholeClusterMesh(c.spec), {16});
  EXPECT_DOUBLE_EQ(all_reduce(flat, {0}), all_reduce(c.mesh, {0, 1}));
}

TEST(MeshCollectiveTest, BadAxesAreErrors) {
  TwoHosts c;
  EXPECT_THAT(MeshAxesGroup(c.spec, c.mesh, {2}).status().message(),
              HasSubstr("axis 2 is not an axis of the mesh [2,8]"));
  EXPECT_THAT(MeshAxesGroup(c.spec, c.mesh, {1, 1}).status().message(),
              HasSubstr("axis 1 is listed twice"));
}

}  // namespace
}  // namespace alpa::cost
