#include "pipeline/submesh_slicing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace alpa::pipeline {
namespace {

using DeviceIds = std::vector<std::vector<int64_t>>;

TEST(SubmeshSlicingTest, AlpasEightGpuSolutionPlacesTheLargestStageFirst) {
  // Alpa's plan for 8 GPUs on one host: stages (1,2), (1,2), (1,4). The 4-device stage is placed
  // first, then the 2-device ones in stage order.
  Result<DeviceIds> devices = SliceSubmeshes(1, 8, {{1, 2}, {1, 2}, {1, 4}});
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(*devices, (DeviceIds{{4, 5}, {6, 7}, {0, 1, 2, 3}}));
}

TEST(SubmeshSlicingTest, WholeHostStagesTakeWholeHosts) {
  Result<DeviceIds> devices = SliceSubmeshes(2, 8, {{1, 8}, {1, 8}});
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(*devices, (DeviceIds{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}));
}

TEST(SubmeshSlicingTest, MultiHostStagesComeFirstInRowMajorOrder) {
  // 4 hosts x 4: a 2-host stage takes hosts 0 and 1, the 1-host stage host 2, the half-host
  // stages host 3.
  Result<DeviceIds> devices = SliceSubmeshes(4, 4, {{1, 2}, {2, 4}, {1, 2}, {1, 4}});
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(*devices, (DeviceIds{{12, 13}, {0, 1, 2, 3, 4, 5, 6, 7}, {14, 15}, {8, 9, 10, 11}}));
}

TEST(SubmeshSlicingTest, SixteenFourDeviceStagesOnSixtyFourDevices) {
  Result<DeviceIds> devices =
      SliceSubmeshes(8, 8, std::vector<SubmeshShape>(16, SubmeshShape{1, 4}));
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 16u);
  for (int64_t stage = 0; stage < 16; ++stage) {
    EXPECT_EQ((*devices)[stage],
              (std::vector<int64_t>{4 * stage, 4 * stage + 1, 4 * stage + 2, 4 * stage + 3}));
  }
}

void ExpectError(const Result<DeviceIds>& devices, const std::string& words) {
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(devices.status().message().find(words), std::string::npos)
      << devices.status().message();
}

TEST(SubmeshSlicingTest, InputsThatDoNotTileTheClusterAreErrors) {
  // 6 of 8 devices.
  ExpectError(SliceSubmeshes(1, 8, {{1, 4}, {1, 2}}), "6 devices in all, the cluster 8");
  // Sizes add up to 2 x 6 but 4 + 4 does not fit in a host of 6.
  ExpectError(SliceSubmeshes(2, 6, {{1, 4}, {1, 4}, {1, 4}}),
              "stage 1 (1 host x 4 devices) does not fit: host 0 has 2 free devices");
  // Two half hosts are not a sub-mesh shape.
  ExpectError(SliceSubmeshes(2, 8, {{2, 4}, {1, 8}}), "stage 0 has shape (2, 4)");
  ExpectError(SliceSubmeshes(0, 8, {}), "0 hosts");
}

}  // namespace
}  // namespace alpa::pipeline
