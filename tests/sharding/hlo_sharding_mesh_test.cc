#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sharding/hlo_sharding.h"
#include "tests/sharding/all_specs.h"

namespace alpa::sharding {
namespace {

using ::testing::HasSubstr;

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes, std::vector<int64_t> partial = {}) {
  return ShardingSpec{std::move(dim_axes), std::move(partial)};
}

std::string Text(const ShardingSpec& spec, const std::vector<int64_t>& mesh) {
  return ToString(ToHloSharding(spec, mesh));
}

Result<ShardingSpec> FromText(std::string_view text, const std::vector<int64_t>& mesh,
                              int64_t rank) {
  Result<HloSharding> sharding = ParseHloSharding(text);
  if (!sharding.ok()) return sharding.status();
  return FromHloSharding(*sharding, mesh, rank);
}

ShardingSpec Convert(std::string_view text, const std::vector<int64_t>& mesh, int64_t rank) {
  Result<ShardingSpec> spec = FromText(text, mesh, rank);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status().ToString();
  return spec.ok() ? *spec : ShardingSpec{};
}

std::string FromTextError(std::string_view text, const std::vector<int64_t>& mesh, int64_t rank) {
  Result<ShardingSpec> spec = FromText(text, mesh, rank);
  EXPECT_FALSE(spec.ok()) << text << " gave " << ToString(*spec);
  return spec.ok() ? "" : spec.status().message();
}

TEST(HloShardingMeshTest, SpecsPrintAsGspmdWouldWriteThem) {
  const std::vector<int64_t> mesh = {2, 4};
  EXPECT_EQ(Text(Spec({{}, {}}), mesh), "{replicated}");
  EXPECT_EQ(Text(Spec({{0, 1}, {}}), mesh), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(Text(Spec({{1, 0}, {}}), mesh), "{devices=[8,1]<=[2,4]T(1,0)}");
  EXPECT_EQ(Text(Spec({{0}, {1}}), mesh), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(Text(Spec({{1}, {0}}), mesh), "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_EQ(Text(Spec({{0}, {}}), mesh), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  // [R,S1]: tiles along axis 1, copies along axis 0.
  EXPECT_EQ(Text(Spec({{}, {1}}), mesh), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Text(Spec({{}, {}}, {1}), mesh),
            "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={unreduced, replicated}}");
  EXPECT_EQ(Text(Spec({{0}, {}}, {1}), mesh), "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}");
  EXPECT_EQ(Text(Spec({{}, {}}, {0, 1}), mesh),
            "{devices=[1,1,8]<=[8] last_tile_dims={unreduced}}");
  // The first dimension on the middle axis of a 3-D mesh, the rest copies.
  EXPECT_EQ(Text(Spec({{1}}), {2, 2, 2}),
            "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
}

// Every spec of a rank-1..3 tensor on meshes [4], [2,4] and [2,2,2], partial ones included,
// survives spec -> HLO text -> spec.
TEST(HloShardingMeshTest, EverySpecRoundTrips) {
  int count = 0;
  for (const std::vector<int64_t>& mesh :
       {std::vector<int64_t>{4}, std::vector<int64_t>{2, 4}, std::vector<int64_t>{2, 2, 2}}) {
    for (int64_t rank = 1; rank <= 3; ++rank) {
      for (const ShardingSpec& spec :
           AllSpecs(static_cast<int64_t>(mesh.size()), rank, /*with_partial=*/true)) {
        const std::string text = Text(spec, mesh);
        Result<ShardingSpec> back = FromText(text, mesh, rank);
        ASSERT_TRUE(back.ok()) << ToString(spec) << " as " << text << ": "
                               << back.status().ToString();
        EXPECT_EQ(*back, spec) << text << " came back as " << ToString(*back);
        ++count;
      }
    }
  }
  EXPECT_EQ(count, 374);  // sum over meshes, ranks and role assignments of prod_d (axes of d)!
}

TEST(HloShardingMeshTest, ExplicitListsAndOtherSpellingsConvertToo) {
  const std::vector<int64_t> mesh = {2, 4};
  EXPECT_EQ(Convert("{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}", mesh, 2),
            Spec({{0}, {}}));
  EXPECT_EQ(Convert("{devices=[2,1,4]<=[8] last_tile_dims={replicated}}", mesh, 2),
            Spec({{0}, {}}));
  // A tile grid that splits nothing is replicated; any order of the copies is.
  EXPECT_EQ(Convert("{devices=[1,1,8]<=[8] last_tile_dim_replicate}", mesh, 2), Spec({{}, {}}));
  EXPECT_EQ(Convert("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}", mesh, 2),
            Spec({{}, {1}}, {0}));
  EXPECT_EQ(Convert("{replicated}", mesh, 3), ShardingSpec::Replicated(3));
  // The annotations of reference/hlo-text-and-sharding.md's example, on a (2, 2) mesh.
  EXPECT_EQ(Convert("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", {2, 2}, 2), Spec({{0}, {}}));
  EXPECT_EQ(Convert("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", {2, 2}, 2),
            Spec({{}, {1}}));
  // Axes of size 1 carry no layout: never chosen, so they come back replicated.
  EXPECT_EQ(Convert("{devices=[4,1]<=[4]}", {1, 4, 1}, 2), Spec({{1}, {}}));
}

TEST(HloShardingMeshTest, ErrorsSayWhyATilingIsNotOnTheMesh) {
  const std::vector<int64_t> mesh = {2, 4};
  EXPECT_THAT(FromTextError("{devices=[4,2]0,2,4,6,1,3,5,7}", mesh, 2),
              HasSubstr("tile assignment [4,2] devices 0,2,4,6,1,3,5,7 is not a split of mesh "
                        "[2,4] axes: tile dimension 0 of size 4 cuts mesh axis 1 of size 4"));
  EXPECT_THAT(FromTextError("{devices=[8]0,3,1,2,4,5,6,7}", {2, 2, 2}, 1),
              HasSubstr("tile dimension 0 moves 3 devices after 1 tile(s)"));
  EXPECT_THAT(FromTextError("{devices=[4]<=[2,2]T(1,0)}", {4}, 1),
              HasSubstr("tile dimension 0 moves 2 devices after 1 tile(s)"));
  EXPECT_THAT(FromTextError("{devices=[2,4]0,1,2,3,4,6,5,7}", mesh, 2),
              HasSubstr("not a count over its mesh axes"));
  EXPECT_THAT(FromTextError("{devices=[2]1,0}", {2}, 1),
              HasSubstr("the first tile is on device 1"));
  EXPECT_THAT(FromTextError("{devices=[4]<=[4]}", mesh, 1),
              HasSubstr("4 devices, the mesh [2,4] has 8"));
  EXPECT_THAT(FromTextError("{devices=[8]<=[8]}", mesh, 2),
              HasSubstr("tiles 1 dimensions, the tensor has 2"));
  EXPECT_THAT(FromTextError("{devices=[1,8]<=[8] last_tile_dims={manual}}", mesh, 1),
              HasSubstr("manual subgroups"));
  EXPECT_THAT(FromTextError("{manual}", mesh, 1), HasSubstr("{manual}"));
  EXPECT_THAT(FromTextError("{maximal device=2}", mesh, 1), HasSubstr("on one device"));
  EXPECT_THAT(FromTextError("{{replicated}}", mesh, 1), HasSubstr("tuple"));
}

}  // namespace
}  // namespace alpa::sharding
