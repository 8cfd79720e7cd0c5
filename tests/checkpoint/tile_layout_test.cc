#include "checkpoint/tile_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa::checkpoint {
namespace {

using sharding::ShardingSpec;
using ::testing::HasSubstr;

TileRegion Region(std::vector<int64_t> offset, std::vector<int64_t> extent) {
  return {std::move(offset), std::move(extent)};
}

TEST(TileLayoutTest, ADeviceHoldsTheBoxItsCoordinatesPick) {
  // [S0,R] on a (2, 2) mesh: rows split over axis 0, replicated over axis 1.
  const ShardingSpec rows = ShardingSpec::SplitDim(2, 0, {0});
  const std::vector<int64_t> mesh = {2, 2};
  for (int64_t device = 0; device < 4; ++device) {
    Result<TileRegion> region = DeviceRegion({8, 6}, rows, mesh, device, "w");
    ASSERT_TRUE(region.ok()) << region.status().message();
    EXPECT_EQ(*region, Region({device / 2 * 4, 0}, {4, 6})) << "device " << device;
  }
  // Of the two devices holding each box, the one at coordinate 0 along axis 1 saves it.
  EXPECT_TRUE(SavesRegion(rows, mesh, 0));
  EXPECT_FALSE(SavesRegion(rows, mesh, 1));
  EXPECT_TRUE(SavesRegion(rows, mesh, 2));
  EXPECT_FALSE(SavesRegion(rows, mesh, 3));

  // [R,S10]: columns split over both axes, axis 1 major: device (a, b) holds tile b * 2 + a.
  const ShardingSpec columns = ShardingSpec::SplitDim(2, 1, {1, 0});
  Result<TileRegion> third = DeviceRegion({8, 8}, columns, mesh, 1, "w");  // (0, 1): tile 2
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, Region({0, 4}, {8, 2}));
  for (int64_t device = 0; device < 4; ++device) EXPECT_TRUE(SavesRegion(columns, mesh, device));
}

TEST(TileLayoutTest, AScalarIsOneBoxSavedOnce) {
  Result<TileRegion> region = DeviceRegion({}, ShardingSpec::Replicated(0), {4}, 3, "t");
  ASSERT_TRUE(region.ok());
  EXPECT_EQ(region->ElementCount(), 1);
  EXPECT_TRUE(SavesRegion(ShardingSpec::Replicated(0), {4}, 0));
  EXPECT_FALSE(SavesRegion(ShardingSpec::Replicated(0), {4}, 3));
}

TEST(TileLayoutTest, PendingSumsAndUnevenSplitsAreRefusedWithTheValueNamed) {
  ShardingSpec partial = ShardingSpec::Replicated(2);
  partial.partial_axes = {0};
  Result<TileRegion> sum = DeviceRegion({4, 4}, partial, {2}, 0, "%w3");
  ASSERT_FALSE(sum.ok());
  EXPECT_THAT(sum.status().message(), HasSubstr("%w3"));
  EXPECT_THAT(sum.status().message(), HasSubstr("pending sum over mesh axis 0"));

  Result<TileRegion> uneven = DeviceRegion({5, 4}, ShardingSpec::SplitDim(2, 0, {0}), {2}, 0, "%b");
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.status().message(), HasSubstr("%b"));
}

TEST(TileLayoutTest, IntersectionsAreBoxesOrEmpty) {
  const TileRegion a = Region({0, 0}, {4, 6});
  EXPECT_EQ(Intersect(a, Region({2, 3}, {4, 4})), Region({2, 3}, {2, 3}));
  EXPECT_EQ(Intersect(a, Region({4, 0}, {4, 6})).ElementCount(), 0);
  EXPECT_EQ(ToString(Region({2, 3}, {2, 3})), "[2:4, 3:6]");
}

}  // namespace
}  // namespace alpa::checkpoint
