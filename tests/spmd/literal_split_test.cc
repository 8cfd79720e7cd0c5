#include "spmd/literal_split.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "sharding/sharding_spec.h"
#include "spmd/mesh_groups.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;

// f32[4,8] with element (i, j) = 8 i + j.
ir::Literal Iota4x8() {
  std::vector<double> values(32);
  std::iota(values.begin(), values.end(), 0.0);
  return ir::Literal::FromDoubles(ir::Shape::Array(ir::DType::kF32, {4, 8}), values);
}

ShardingSpec Spec(std::vector<std::vector<int64_t>> dim_axes, std::vector<int64_t> partial = {}) {
  return ShardingSpec{std::move(dim_axes), std::move(partial)};
}

TEST(LiteralSplitTest, TilesFollowTheMeshCoordinates) {
  const std::vector<int64_t> mesh = {2, 4};
  // [S0,S1]: device 6 = (1, 2) holds rows 2..3, columns 4..5.
  Result<std::vector<ir::Literal>> locals = SplitLiteral(Iota4x8(), Spec({{0}, {1}}), mesh);
  ASSERT_TRUE(locals.ok()) << locals.status().message();
  ASSERT_EQ(locals->size(), 8u);
  const ir::Literal& tile = (*locals)[6];
  EXPECT_EQ(tile.shape().dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(tile.GetDouble(0), 20);  // (2, 4)
  EXPECT_EQ(tile.GetDouble(1), 21);
  EXPECT_EQ(tile.GetDouble(2), 28);  // (3, 4)
  // [R,S10]: columns in 8 tiles, axis 1 major: device 6 holds tile 2 * 2 + 1 = 5.
  locals = SplitLiteral(Iota4x8(), Spec({{}, {1, 0}}), mesh);
  ASSERT_TRUE(locals.ok());
  EXPECT_EQ((*locals)[6].shape().dims(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ((*locals)[6].GetDouble(0), 5);
  EXPECT_EQ((*locals)[6].GetDouble(3), 29);
}

TEST(LiteralSplitTest, PartialSpecsHoldTheValueOnceAlongThePartialAxes) {
  const std::vector<int64_t> mesh = {2, 4};
  Result<std::vector<ir::Literal>> locals = SplitLiteral(Iota4x8(), Spec({{0}, {}}, {1}), mesh);
  ASSERT_TRUE(locals.ok());
  EXPECT_EQ((*locals)[4].GetDouble(1), 17);  // (1, 0): rows 2..3, coordinate 0 along axis 1
  EXPECT_EQ((*locals)[5].GetDouble(1), 0);   // (1, 1): zeros
}

TEST(LiteralSplitTest, AssembleInvertsSplit) {
  const std::vector<int64_t> mesh = {2, 4};
  const ir::Literal global = Iota4x8();
  for (const ShardingSpec& spec :
       {Spec({{}, {}}), Spec({{0}, {1}}), Spec({{1}, {0}}), Spec({{}, {0, 1}}), Spec({{}, {1, 0}}),
        Spec({{0}, {}}, {1}), Spec({{}, {}}, {0, 1})}) {
    Result<std::vector<ir::Literal>> locals = SplitLiteral(global, spec, mesh);
    ASSERT_TRUE(locals.ok()) << sharding::ToString(spec) << ": " << locals.status().message();
    Result<ir::Literal> assembled = AssembleLiteral(*locals, spec, mesh, global.shape());
    ASSERT_TRUE(assembled.ok()) << assembled.status().message();
    EXPECT_EQ(*assembled, global) << sharding::ToString(spec);
  }
}

TEST(LiteralSplitTest, PartialTilesAreSummed) {
  const std::vector<int64_t> mesh = {4};
  const ir::Shape shape = ir::Shape::Array(ir::DType::kF32, {2});
  std::vector<ir::Literal> locals;
  for (int device = 0; device < 4; ++device) {
    locals.push_back(ir::Literal::FromDoubles(shape, {1.0 * device, 1.0}));
  }
  Result<ir::Literal> sum = AssembleLiteral(locals, Spec({{}}, {0}), mesh, shape);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->GetDouble(0), 6);
  EXPECT_EQ(sum->GetDouble(1), 4);
}

TEST(LiteralSplitTest, UnevenSplitsAndWrongTilesAreErrors) {
  const ir::Literal global = Iota4x8();
  Result<std::vector<ir::Literal>> uneven = SplitLiteral(global, Spec({{0}, {}}), {3});
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("uneven"), std::string::npos)
      << uneven.status().message();
  std::vector<ir::Literal> wrong(4, global);
  Result<ir::Literal> assembled = AssembleLiteral(wrong, Spec({{0}, {}}), {4}, global.shape());
  ASSERT_FALSE(assembled.ok());
  EXPECT_NE(assembled.status().message().find("device 0"), std::string::npos);
}

}  // namespace
}  // namespace alpa::spmd
