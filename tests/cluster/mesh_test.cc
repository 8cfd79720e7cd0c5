// Physical and logical meshes: device order, axis links (the axis across hosts is the slow one),
// shapes that do not tile.
#include "cluster/mesh.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/cluster_json.h"
#include "cluster/presets.h"

namespace alpa::cluster {
namespace {

using ::testing::HasSubstr;

ClusterSpec Preset(const std::string& argument) {
  Result<ClusterSpec> spec = ParseClusterArgument(argument);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : ClusterSpec{};
}

TEST(Mesh, TwoByEightAxisZeroCrossesHosts) {
  ClusterSpec spec = Preset("p3.16xlarge:2");
  PhysicalMesh physical = WholeClusterMesh(spec);
  ASSERT_EQ(physical.size(), 16);
  EXPECT_EQ(physical.hosts[7], 0);
  EXPECT_EQ(physical.hosts[8], 1);
  Result<LogicalMesh> mesh = MakeLogicalMesh(spec, physical, {2, 8});
  ASSERT_TRUE(mesh.ok()) << mesh.status().ToString();
  ASSERT_EQ(mesh->axes.size(), 2u);
  EXPECT_EQ(mesh->axes[0].level, LinkLevel::kInterHost);
  EXPECT_DOUBLE_EQ(mesh->axes[0].bandwidth, 3.125e9);
  EXPECT_EQ(mesh->axes[0].sharing, 8);  // the 8 devices of a host share its 25 Gbps
  EXPECT_DOUBLE_EQ(mesh->axes[0].PerDeviceBandwidth(), 3.125e9 / 8);
  EXPECT_EQ(mesh->axes[1].level, LinkLevel::kIntraHost);
  EXPECT_DOUBLE_EQ(mesh->axes[1].bandwidth, 150e9);
  EXPECT_EQ(mesh->axes[1].sharing, 1);
  EXPECT_LT(mesh->axes[0].PerDeviceBandwidth(), mesh->axes[1].PerDeviceBandwidth());
  EXPECT_EQ(mesh->devices, physical.devices);
}

TEST(Mesh, AxisLinksDependOnTheShape) {
  ClusterSpec spec = Preset("p3.16xlarge:2");
  PhysicalMesh physical = WholeClusterMesh(spec);
  // (16,1): the one real axis crosses hosts.
  Result<LogicalMesh> flat = MakeLogicalMesh(spec, physical, {16, 1});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->axes[0].level, LinkLevel::kInterHost);
  EXPECT_EQ(flat->axes[1].level, LinkLevel::kIntraHost);
  // (4,4): axis 0 groups are {0,4,8,12}: they cross hosts; axis 1 groups {0..3} stay inside.
  Result<LogicalMesh> square = MakeLogicalMesh(spec, physical, {4, 4});
  ASSERT_TRUE(square.ok());
  EXPECT_EQ(square->axes[0].level, LinkLevel::kInterHost);
  EXPECT_EQ(square->axes[1].level, LinkLevel::kIntraHost);
  // (2,2,4): N-D; axis 0 crosses hosts, axes 1 and 2 do not.
  Result<LogicalMesh> cube = MakeLogicalMesh(spec, physical, {2, 2, 4});
  ASSERT_TRUE(cube.ok());
  EXPECT_EQ(cube->axes[0].level, LinkLevel::kInterHost);
  EXPECT_EQ(cube->axes[1].level, LinkLevel::kIntraHost);
  EXPECT_EQ(cube->axes[2].level, LinkLevel::kIntraHost);
  // (8,2) over devices in host-major order: axis 0 groups {0,2,...,14} cross hosts.
  Result<LogicalMesh> tall = MakeLogicalMesh(spec, physical, {8, 2});
  ASSERT_TRUE(tall.ok());
  EXPECT_EQ(tall->axes[0].level, LinkLevel::kInterHost);
  EXPECT_EQ(tall->axes[1].level, LinkLevel::kIntraHost);
}

TEST(Mesh, InsideOneHostEveryAxisIsIntraHost) {
  ClusterSpec spec = Preset("p4d.24xlarge");
  Result<LogicalMesh> mesh = MakeLogicalMesh(spec, WholeClusterMesh(spec), {2, 4});
  ASSERT_TRUE(mesh.ok());
  for (const AxisLink& axis : mesh->axes) {
    EXPECT_EQ(axis.level, LinkLevel::kIntraHost);
    EXPECT_DOUBLE_EQ(axis.bandwidth, 300e9);
  }
}

TEST(Mesh, RacksAreTheThirdLevel) {
  Result<ClusterSpec> spec =
      LoadClusterFile(std::string(ALPA_TESTDATA_DIR) + "/../examples/clusters/heterogeneous.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  // Hosts 0,1 are rack 0 (V100), hosts 2 (V100) and 3 (A100) rack 1.
  PhysicalMesh physical = WholeClusterMesh(*spec);
  ASSERT_EQ(physical.size(), 28);
  Result<PhysicalMesh> rack0 = HostBlockMesh(*spec, 0, 2, 8);
  ASSERT_TRUE(rack0.ok());
  Result<LogicalMesh> in_rack = MakeLogicalMesh(*spec, *rack0, {2, 8});
  ASSERT_TRUE(in_rack.ok());
  EXPECT_EQ(in_rack->axes[0].level, LinkLevel::kInterHost);

  Result<PhysicalMesh> across = HostBlockMesh(*spec, 1, 2, 8);
  ASSERT_TRUE(across.ok());
  Result<LogicalMesh> racks = MakeLogicalMesh(*spec, *across, {2, 8});
  ASSERT_TRUE(racks.ok());
  EXPECT_EQ(racks->axes[0].level, LinkLevel::kInterRack);
  EXPECT_DOUBLE_EQ(racks->axes[0].bandwidth, 1.25e10);
  EXPECT_EQ(racks->axes[1].level, LinkLevel::kIntraHost);

  // An axis inside hosts of two types takes the slower intra-host link.
  Result<PhysicalMesh> mixed = MakePhysicalMesh(*spec, {0, 1, 24, 25});
  ASSERT_TRUE(mixed.ok());
  Result<LogicalMesh> mixed_mesh = MakeLogicalMesh(*spec, *mixed, {2, 2});
  ASSERT_TRUE(mixed_mesh.ok());
  EXPECT_EQ(mixed_mesh->axes[0].level, LinkLevel::kInterRack);
  EXPECT_EQ(mixed_mesh->axes[1].level, LinkLevel::kIntraHost);
  EXPECT_DOUBLE_EQ(mixed_mesh->axes[1].bandwidth, 1.5e11);
}

TEST(Mesh, ShapesThatDoNotTileAreErrors) {
  ClusterSpec spec = Preset("p3.16xlarge:2");
  PhysicalMesh physical = WholeClusterMesh(spec);
  Result<LogicalMesh> bad = MakeLogicalMesh(spec, physical, {3, 4});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "mesh shape [3,4] (12 devices) does not tile the 16 devices of the mesh");
  EXPECT_FALSE(MakeLogicalMesh(spec, physical, {}).ok());
  EXPECT_THAT(MakeLogicalMesh(spec, physical, {0, 16}).status().message(), HasSubstr("at least 1"));
  EXPECT_THAT(MakeLogicalMesh(spec, physical, {-2, -8}).status().message(),
              HasSubstr("at least 1"));
}

TEST(Mesh, PhysicalMeshErrors) {
  ClusterSpec spec = Preset("p3.16xlarge:2");
  EXPECT_THAT(MakePhysicalMesh(spec, {}).status().message(), HasSubstr("at least one device"));
  EXPECT_THAT(MakePhysicalMesh(spec, {0, 16}).status().message(),
              HasSubstr("device 16 does not exist"));
  EXPECT_THAT(MakePhysicalMesh(spec, {3, 3}).status().message(), HasSubstr("listed twice"));
  EXPECT_FALSE(HostBlockMesh(spec, 1, 2, 8).ok());
  EXPECT_FALSE(HostBlockMesh(spec, 0, 1, 9).ok());
  Result<PhysicalMesh> block = HostBlockMesh(spec, 1, 1, 4);
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->devices, (std::vector<int64_t>{8, 9, 10, 11}));
  EXPECT_EQ(block->hosts, (std::vector<int64_t>{1, 1, 1, 1}));
}

}  // namespace
}  // namespace alpa::cluster
