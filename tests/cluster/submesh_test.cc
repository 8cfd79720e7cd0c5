// Alpa's sub-mesh choices (get_submesh_choices) for 1x8, 2x8, 4x8 and beyond, with racks and with
// several host types.
#include "cluster/submesh.h"

#include <gtest/gtest.h>

#include "cluster/cluster_json.h"
#include "cluster/presets.h"

namespace alpa::cluster {
namespace {

using Shapes = std::vector<std::vector<int64_t>>;

Shapes ShapesOf(const std::string& argument, SubmeshSpace space = SubmeshSpace::kPowerOfTwo) {
  Result<ClusterSpec> spec = ParseClusterArgument(argument);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  if (!spec.ok()) return {};
  Shapes shapes;
  for (const Submesh& submesh : EnumerateSubmeshes(*spec, space)) {
    EXPECT_EQ(submesh.host_type, 0);
    shapes.push_back(submesh.shape);
  }
  return shapes;
}

TEST(Submeshes, AlpasChoices) {
  EXPECT_EQ(ShapesOf("p3.16xlarge:1"), (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}}));
  EXPECT_EQ(ShapesOf("p3.16xlarge:2"), (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}}));
  EXPECT_EQ(ShapesOf("p3.16xlarge:4"), (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}}));
  EXPECT_EQ(ShapesOf("p3.16xlarge:4", SubmeshSpace::kAll),
            (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {3, 8}, {4, 8}}));
  EXPECT_EQ(ShapesOf("p3.16xlarge:8", SubmeshSpace::kSmallPowerOfTwo),
            (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}}));
  EXPECT_EQ(ShapesOf("p3.16xlarge:6"), (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}}));
}

TEST(Submeshes, DevicesPerHostNotAPowerOfTwoEndsWithTheWholeHost) {
  EXPECT_EQ(ShapesOf("local:1x6"), (Shapes{{1, 1}, {1, 2}, {1, 4}, {1, 6}}));
  EXPECT_EQ(ShapesOf("local:1x1"), (Shapes{{1, 1}}));
}

TEST(Submeshes, RacksAddAThirdLevel) {
  Result<ClusterSpec> spec = ParseClusterArgument("p3.16xlarge:8");
  ASSERT_TRUE(spec.ok());
  spec->racks = RackSpec{2, Link{12.5e9, 50e-6, Topology::kSwitch, {}}};
  ASSERT_TRUE(ValidateClusterSpec(*spec).ok());
  Shapes shapes;
  for (const Submesh& submesh : EnumerateSubmeshes(*spec)) shapes.push_back(submesh.shape);
  EXPECT_EQ(shapes,
            (Shapes{{1, 1, 1}, {1, 1, 2}, {1, 1, 4}, {1, 1, 8}, {1, 2, 8}, {2, 2, 8}, {4, 2, 8}}));
}

TEST(Submeshes, HeterogeneousClustersStayInsideOneHostType) {
  Result<ClusterSpec> spec =
      LoadClusterFile(std::string(ALPA_TESTDATA_DIR) + "/../examples/clusters/heterogeneous.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  std::vector<HostType> types = HostTypes(*spec);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].hosts, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(types[1].hosts, (std::vector<int64_t>{3}));
  std::vector<Submesh> submeshes = EnumerateSubmeshes(*spec, SubmeshSpace::kAll);
  std::vector<Submesh> expected = {{{1, 1}, 0}, {{1, 2}, 0}, {{1, 4}, 0}, {{1, 8}, 0}, {{2, 8}, 0},
                                   {{3, 8}, 0}, {{1, 1}, 1}, {{1, 2}, 1}, {{1, 4}, 1}};
  EXPECT_EQ(submeshes, expected);
  EXPECT_EQ(submeshes[5].devices(), 24);
}

TEST(Submeshes, LogicalShapes) {
  EXPECT_EQ(LogicalMeshShapes(8, 2), (Shapes{{1, 8}, {2, 4}, {4, 2}, {8, 1}}));
  EXPECT_EQ(LogicalMeshShapes(4, 3),
            (Shapes{{1, 1, 4}, {1, 2, 2}, {1, 4, 1}, {2, 1, 2}, {2, 2, 1}, {4, 1, 1}}));
  EXPECT_EQ(LogicalMeshShapes(6, 1), (Shapes{{6}}));
  EXPECT_TRUE(LogicalMeshShapes(0, 2).empty());
}

}  // namespace
}  // namespace alpa::cluster
