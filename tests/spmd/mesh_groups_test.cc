#include "spmd/mesh_groups.h"

#include <gtest/gtest.h>

#include <vector>

namespace alpa::spmd {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

TEST(MeshGroupsTest, DevicesAreRowMajor) {
  EXPECT_EQ(DeviceCount({2, 4}), 8);
  EXPECT_EQ(DeviceCoordinates({2, 4}, 6), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(IndexOverAxes({2, 4}, 6, {0}), 1);
  EXPECT_EQ(IndexOverAxes({2, 4}, 6, {1}), 2);
  EXPECT_EQ(IndexOverAxes({2, 4}, 6, {0, 1}), 6);  // 1 * 4 + 2
  EXPECT_EQ(IndexOverAxes({2, 4}, 6, {1, 0}), 5);  // 2 * 2 + 1
  EXPECT_EQ(IndexOverAxes({2, 4}, 6, {}), 0);
}

TEST(MeshGroupsTest, ReplicaGroupsOfA2x4Mesh) {
  // Axis 0 (size 2): the devices of one column.
  EXPECT_EQ(AxesReplicaGroups({2, 4}, {0}), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Axis 1 (size 4): the devices of one row.
  EXPECT_EQ(AxesReplicaGroups({2, 4}, {1}), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(AxesReplicaGroups({2, 4}, {0, 1}), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  // Axis 1 major: member k holds tile k of a dimension split [S10].
  EXPECT_EQ(AxesReplicaGroups({2, 4}, {1, 0}), (Groups{{0, 4, 1, 5, 2, 6, 3, 7}}));
  EXPECT_EQ(AxesReplicaGroups({2, 4}, {}), (Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

TEST(MeshGroupsTest, GroupMembersDifferOnlyAlongTheAxes) {
  const std::vector<int64_t> mesh = {2, 3, 2};
  for (const std::vector<int64_t>& axes :
       std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 2}, {2, 1}}) {
    const Groups groups = AxesReplicaGroups(mesh, axes);
    int64_t members = 0;
    for (const std::vector<int64_t>& group : groups) {
      for (size_t k = 0; k < group.size(); ++k) {
        ++members;
        EXPECT_EQ(IndexOverAxes(mesh, group[k], axes), static_cast<int64_t>(k));
        const std::vector<int64_t> a = DeviceCoordinates(mesh, group[0]);
        const std::vector<int64_t> b = DeviceCoordinates(mesh, group[k]);
        for (int64_t axis = 0; axis < 3; ++axis) {
          if (std::find(axes.begin(), axes.end(), axis) == axes.end()) {
            EXPECT_EQ(a[static_cast<size_t>(axis)], b[static_cast<size_t>(axis)]);
          }
        }
      }
    }
    EXPECT_EQ(members, DeviceCount(mesh));
  }
}

}  // namespace
}  // namespace alpa::spmd
