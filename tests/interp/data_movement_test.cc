#include <gtest/gtest.h>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

TEST(DataMovementTest, BroadcastReshapeTranspose) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={0}
  t = f32[3,2] transpose(b), dimensions={1,0}
  ROOT r = f32[6] reshape(t)
})",
                             {Vals(DType::kF32, {2}, {1, 2})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{1, 2, 1, 2, 1, 2}));
}

TEST(DataMovementTest, Transpose3D) {
  // in[i,j,k] = 100i + 10j + k with dims [2,2,3]; out[k,i,j] = in[i,j,k].
  std::vector<double> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) values.push_back(100 * i + 10 * j + k);
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[2,2,3] parameter(0)
  ROOT t = s32[3,2,2] transpose(p), dimensions={2,0,1}
})",
                             {Vals(DType::kS32, {2, 2, 3}, values)});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 10, 100, 110, 1, 11, 101, 111, 2, 12, 102, 112}));
}

TEST(DataMovementTest, SliceWithStrideAndReverse) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[2,5] parameter(0)
  s = s32[2,2] slice(p), slice={[0:2], [1:5:2]}
  ROOT r = s32[2,2] reverse(s), dimensions={0,1}
})",
                             {Ints(DType::kS32, {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
  // slice: {{1,3},{6,8}}; reversed in both dims: {{8,6},{3,1}}.
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{8, 6, 3, 1}));
}

TEST(DataMovementTest, ConcatenateMiddleDimension) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  a = s32[2,1] parameter(0)
  b = s32[2,2] parameter(1)
  ROOT c = s32[2,3] concatenate(a, b), dimensions={1}
})",
                             {Ints(DType::kS32, {2, 1}, {1, 2}), Ints(DType::kS32, {2, 2}, {3, 4, 5, 6})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
}

TEST(DataMovementTest, PadInteriorAndNegative) {
  // [1,2,3] with low=-1 high=2 interior=1: full padded [0? ...]: interior gives 1,0,2,0,3;
  // low -1 drops the first element: 0,2,0,3; high 2 appends 9,9.
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[3] parameter(0)
  v = s32[] constant(9)
  ROOT r = s32[6] pad(p, v), padding=-1_2_1
})",
                             {Ints(DType::kS32, {3}, {1, 2, 3})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{9, 2, 9, 3, 9, 9}));
}

TEST(DataMovementTest, Pad2D) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[1,2] parameter(0)
  v = f32[] constant(0)
  ROOT r = f32[2,3] pad(p, v), padding=1_0x0_1
})",
                             {Vals(DType::kF32, {1, 2}, {5, 6})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{0, 0, 0, 5, 6, 0}));
}

TEST(DataMovementTest, IotaAndEmptyDims) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  ROOT i = s32[2,3] iota(), iota_dimension=1
})");
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  ir::Literal empty = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[0,3] parameter(0)
  t = f32[3,0] transpose(p), dimensions={1,0}
  b = f32[3,0,2] broadcast(t), dimensions={0,1}
  ROOT r = f32[3,0,2] negate(b)
})",
                                 {Vals(DType::kF32, {0, 3}, {})});
  EXPECT_EQ(empty.shape().dims(), (std::vector<int64_t>{3, 0, 2}));
  EXPECT_EQ(empty.element_count(), 0);
}

TEST(DataMovementTest, DynamicSliceClampsStarts) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  i = s32[] parameter(1)
  ROOT d = s32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
})";
  ir::Literal p = Ints(DType::kS32, {5}, {0, 1, 2, 3, 4});
  EXPECT_EQ(AsInts(MustRunHlo(text, {p, Ints(DType::kS32, {}, {1})})),
            (std::vector<int64_t>{1, 2}));
  // 4 is clamped to 5 - 2 = 3, -7 to 0.
  EXPECT_EQ(AsInts(MustRunHlo(text, {p, Ints(DType::kS32, {}, {4})})),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(AsInts(MustRunHlo(text, {p, Ints(DType::kS32, {}, {-7})})),
            (std::vector<int64_t>{0, 1}));
}

TEST(DataMovementTest, DynamicUpdateSliceClampsStarts) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  u = s32[1,2] parameter(1)
  i = s32[] constant(5)
  j = s32[] constant(2)
  ROOT d = s32[2,3] dynamic-update-slice(p, u, i, j)
})",
                             {Ints(DType::kS32, {2, 3}, {0, 0, 0, 0, 0, 0}),
                              Ints(DType::kS32, {1, 2}, {7, 8})});
  // Starts (5, 2) clamp to (1, 1).
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 0, 0, 0, 7, 8}));
}

TEST(DataMovementTest, BitcastAndCopyKeepBytes) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2,2] parameter(0)
  c = f32[2,2] copy(p)
  ROOT b = f32[4] bitcast(c)
})",
                             {Vals(DType::kF32, {2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{1, 2, 3, 4}));
}

TEST(DataMovementTest, BadSliceIsAnError) {
  Result<ir::Literal> r = RunHlo(R"(
HloModule m
ENTRY e {
  p = s32[3] parameter(0)
  ROOT s = s32[2] slice(p), slice={[2:4]}
})",
                                 {Ints(DType::kS32, {3}, {1, 2, 3})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace alpa::interp::testing
