#include "sharding/sharding_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa::sharding {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes, std::vector<int64_t> partial = {}) {
  return ShardingSpec{std::move(dim_axes), std::move(partial)};
}

TEST(ShardingSpecTest, ConstructorsAndQueries) {
  const ShardingSpec r = ShardingSpec::Replicated(2);
  EXPECT_TRUE(r.IsFullyReplicated());
  EXPECT_EQ(r.rank(), 2);
  EXPECT_THAT(r.ReplicatedAxes(2), ElementsAre(0, 1));

  const ShardingSpec s = ShardingSpec::SplitDim(3, 1, {1, 0});
  EXPECT_FALSE(s.IsFullyReplicated());
  EXPECT_EQ(s.DimOfAxis(0), 1);
  EXPECT_EQ(s.DimOfAxis(1), 1);
  EXPECT_EQ(s.DimOfAxis(2), -1);
  EXPECT_THAT(s.ReplicatedAxes(3), ElementsAre(2));

  const ShardingSpec p = Spec({{}, {}}, {1});
  EXPECT_FALSE(p.IsFullyReplicated());
  EXPECT_TRUE(p.IsPartialOver(1));
  EXPECT_FALSE(p.IsPartialOver(0));
  EXPECT_THAT(p.ReplicatedAxes(2), ElementsAre(0));
}

TEST(ShardingSpecTest, ToStringUsesAlpaNotation) {
  EXPECT_EQ(ToString(Spec({{0}, {}})), "[S0,R]");
  EXPECT_EQ(ToString(Spec({{0, 1}, {}})), "[S01,R]");
  EXPECT_EQ(ToString(Spec({{}, {}}, {1})), "[R,R] P1");
  EXPECT_EQ(ToString(Spec({{10}, {2}}, {0, 11})), "[S(10),S2] P0(11)");
  EXPECT_EQ(ToString(ShardingSpec::Replicated(0)), "[]");
}

TEST(ShardingSpecTest, TilesAndShardDimsRoundUp) {
  const std::vector<int64_t> mesh = {2, 4};
  const ShardingSpec s = Spec({{0, 1}, {}, {1}}, {});
  EXPECT_EQ(TileCount(s, mesh, 0), 8);
  EXPECT_EQ(TileCount(s, mesh, 1), 1);
  // ceil(10 / 8) = 2, 3 whole, ceil(5 / 4) = 2.
  EXPECT_THAT(ShardDims(Spec({{0, 1}, {}, {}}), mesh, {10, 3, 5}), ElementsAre(2, 3, 5));
  EXPECT_THAT(ShardDims(Spec({{0}, {}, {1}}), mesh, {10, 3, 5}), ElementsAre(5, 3, 2));
}

TEST(ShardingSpecTest, CheckSpecAcceptsValidSpecs) {
  EXPECT_TRUE(CheckSpec(Spec({{0}, {1}}), {2, 4}, {8, 8}).ok());
  EXPECT_TRUE(CheckSpec(Spec({{1, 0}, {}}, {}), {2, 4}, {8, 8}).ok());
  EXPECT_TRUE(CheckSpec(Spec({{}, {}}, {0, 1}), {2, 4}, {8, 8}).ok());
  EXPECT_TRUE(CheckSpec(ShardingSpec::Replicated(0), {2, 4}, {}).ok());
}

TEST(ShardingSpecTest, CheckSpecNamesTheProblem) {
  const std::vector<int64_t> mesh = {2, 4};
  auto message = [&](const ShardingSpec& spec, std::vector<int64_t> dims) {
    Status status = CheckSpec(spec, mesh, dims);
    EXPECT_FALSE(status.ok());
    return status.message();
  };
  EXPECT_THAT(message(Spec({{0}}), {8, 8}), HasSubstr("1 dimension(s), the tensor has 2"));
  EXPECT_THAT(message(Spec({{2}, {}}), {8, 8}), HasSubstr("dimension 0 uses mesh axis 2"));
  EXPECT_THAT(message(Spec({{-1}, {}}), {8, 8}), HasSubstr("mesh axis -1"));
  EXPECT_THAT(message(Spec({{0}, {0}}), {8, 8}), HasSubstr("mesh axis 0 is used twice"));
  EXPECT_THAT(message(Spec({{0}, {}}, {0}), {8, 8}), HasSubstr("mesh axis 0 is used twice"));
  EXPECT_THAT(message(Spec({{}, {}}, {1, 0}), {8, 8}), HasSubstr("ascending"));
  EXPECT_THAT(message(Spec({{}, {}}, {2}), {8, 8}), HasSubstr("the partial axes"));
  EXPECT_THAT(message(Spec({{0, 1}, {}}), {4, 8}),
              HasSubstr("dimension 0 of size 4 cannot be cut into 8 tiles"));
}

}  // namespace
}  // namespace alpa::sharding
