// gather, scatter and sort: expected values are worked out by hand from XLA's operation semantics.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

// op[i,j] = 10 i + j for an [rows, cols] s32 array, so a value names its own coordinates.
ir::Literal Coordinates(int64_t rows, int64_t cols) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) values.push_back(10 * i + j);
  return Ints(DType::kS32, {rows, cols}, values);
}

// ---------------------------------------------------------------------------------------------
// gather

TEST(GatherTest, EmbeddingLookupTakesRows) {
  // Indices s32[3] with index_vector_dim=1 (= rank, the implicit trailing dim of size 1):
  // result[b, :] = table[idx[b], :] for idx = {2, 0, 2}.
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  t = s32[4,3] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = s32[3,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})",
                             {Coordinates(4, 3), Ints(DType::kS32, {3}, {2, 0, 2})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{20, 21, 22, 0, 1, 2, 20, 21, 22}));
}

TEST(GatherTest, IndexVectorDimLastOrFirstReadsTheSameStarts) {
  // Starts (1,2) and (2,0) into op[i,j] = 10i+j, slice 1x2 with dim 0 collapsed:
  // {op[1,2], op[1,3]} = {12, 13}; {op[2,0], op[2,1]} = {20, 21}.
  const char* kLast = R"(
HloModule m
ENTRY e {
  t = s32[3,4] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2}
})";
  const std::vector<int64_t> expected{12, 13, 20, 21};
  // index_vector_dim=1: row b of the indices is start vector b.
  EXPECT_EQ(AsInts(MustRunHlo(kLast, {Coordinates(3, 4), Ints(DType::kS32, {2, 2}, {1, 2, 2, 0})})),
            expected);
  // index_vector_dim=0: column b is start vector b, so the same starts are stored transposed.
  const char* kFirst = R"(
HloModule m
ENTRY e {
  t = s32[3,4] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,2}
})";
  EXPECT_EQ(
      AsInts(MustRunHlo(kFirst, {Coordinates(3, 4), Ints(DType::kS32, {2, 2}, {1, 2, 2, 0})})),
      expected);
}

TEST(GatherTest, SeveralOffsetDimsKeepTheWindow) {
  // No collapsed dims: 2x2 windows at starts (0,1) and (1,2) of op[i,j] = 10i+j.
  //   window 0 = {{1,2},{11,12}}   window 1 = {{12,13},{22,23}}
  const char* kText = R"(
HloModule m
ENTRY e {
  t = s32[3,4] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2,2] gather(t, i), offset_dims={OFFSETS}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})";
  std::string trailing = kText;
  trailing.replace(trailing.find("OFFSETS"), 7, "1,2");
  const std::vector<ir::Literal> args{Coordinates(3, 4), Ints(DType::kS32, {2, 2}, {0, 1, 1, 2})};
  // offset_dims={1,2}: result[b, o0, o1].
  EXPECT_EQ(AsInts(MustRunHlo(trailing, args)),
            (std::vector<int64_t>{1, 2, 11, 12, 12, 13, 22, 23}));
  // offset_dims={0,2}: the batch dim sits in the middle, result[o0, b, o1] =
  // op[s_b0 + o0, s_b1 + o1]: o0=0 -> {1,2},{12,13}; o0=1 -> {11,12},{22,23}.
  std::string split = kText;
  split.replace(split.find("OFFSETS"), 7, "0,2");
  EXPECT_EQ(AsInts(MustRunHlo(split, args)), (std::vector<int64_t>{1, 2, 12, 13, 11, 12, 22, 23}));
}

TEST(GatherTest, CollapsedMiddleDimTakesColumns) {
  // op[a,b,c] = 100a + 10b + c, dims [2,3,2]. Start index on dim 1 only; slice {2,1,2} with
  // dim 1 collapsed: result[k, a, c] = op[a, idx[k], c] for idx = {2, 0}.
  std::vector<int64_t> values;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 2; ++c) values.push_back(100 * a + 10 * b + c);
  ir::Literal r =
      MustRunHlo(R"(
HloModule m
ENTRY e {
  t = s32[2,3,2] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = s32[2,2,2] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={2,1,2}
})",
                 {Ints(DType::kS32, {2, 3, 2}, values), Ints(DType::kS32, {2}, {2, 0})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{20, 21, 120, 121, 0, 1, 100, 101}));
}

TEST(GatherTest, OutOfRangeStartsAreClamped) {
  // XLA clamps each start to [0, operand_dim - slice_size] = [0, 5 - 2] = [0, 3]:
  // -2 -> 0 gives {0,1}; 4 -> 3 gives {3,4}; 1 stays, {1,2}.
  ir::Literal r =
      MustRunHlo(R"(
HloModule m
ENTRY e {
  t = s32[5] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = s32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2}
})",
                 {Ints(DType::kS32, {5}, {0, 1, 2, 3, 4}), Ints(DType::kS32, {3}, {-2, 4, 1})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 1, 3, 4, 1, 2}));
  // Each dimension clamps on its own: start (5, -1) of a 2x2 window in a 3x3 operand becomes
  // (min(5, 3-2), max(-1, 0)) = (1, 0): {op[1,0], op[1,1], op[2,0], op[2,1]} = {10,11,20,21}.
  ir::Literal r2 = MustRunHlo(R"(
HloModule m
ENTRY e {
  t = s32[3,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = s32[2,2] gather(t, i), offset_dims={0,1}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={2,2}
})",
                              {Coordinates(3, 3), Ints(DType::kS32, {2}, {5, -1})});
  EXPECT_EQ(AsInts(r2), (std::vector<int64_t>{10, 11, 20, 21}));
}

TEST(GatherTest, BatchingDimsPairOperandAndIndexBatches) {
  // take_along_axis: op[b, j] = 10b + j; result[b, k] = op[b, idx[b, k]].
  // idx = {{2,0},{1,1}} -> {op[0,2], op[0,0], op[1,1], op[1,1]} = {2, 0, 11, 11}.
  const char* kText = R"(
HloModule m
ENTRY e {
  t = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={BATCH}, index_vector_dim=2, slice_sizes={1,1}
})";
  std::string first = kText;
  first.replace(first.find("BATCH"), 5, "0");
  EXPECT_EQ(AsInts(MustRunHlo(first, {Coordinates(2, 3), Ints(DType::kS32, {2, 2}, {2, 0, 1, 1})})),
            (std::vector<int64_t>{2, 0, 11, 11}));
  // With the batch on indices dim 1: result[k, b] = op[b, idx[k, b]]; idx = {{2,1},{0,1}}:
  // {op[0,2], op[1,1], op[0,0], op[1,1]} = {2, 11, 0, 11}.
  std::string second = kText;
  second.replace(second.find("BATCH"), 5, "1");
  EXPECT_EQ(
      AsInts(MustRunHlo(second, {Coordinates(2, 3), Ints(DType::kS32, {2, 2}, {2, 1, 0, 1})})),
      (std::vector<int64_t>{2, 11, 0, 11}));
}

TEST(GatherTest, CollapsedDimWithAWiderSliceIsAnError) {
  // Collapsing dim 0 of a 2-row slice would drop the second row; XLA rejects it.
  Result<ir::Literal> r = RunHlo(R"(
HloModule m
ENTRY e {
  t = s32[3,2] parameter(0)
  i = s32[1] parameter(1)
  ROOT wide = s32[1,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,2}
})",
                                 {Coordinates(3, 2), Ints(DType::kS32, {1}, {0})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("%wide"), std::string::npos) << r.status().message();
}

// ---------------------------------------------------------------------------------------------
// scatter

constexpr const char* kAddS32 = R"(
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT r = s32[] add(x, y)
}
)";

// Prefixes `entry` with the s32 add computation.
std::string WithAdd(const char* entry) { return std::string("HloModule m\n") + kAddS32 + entry; }

TEST(ScatterTest, AddCombinerAccumulatesDuplicateIndices) {
  // op = {1,2,3,4}; updates {10,20,30} at {1,3,1}: op[1] = 2+10+30 = 42, op[3] = 4+20 = 24.
  ir::Literal r =
      MustRunHlo(WithAdd(R"(
ENTRY e {
  o = s32[4] parameter(0)
  i = s32[3] parameter(1)
  u = s32[3] parameter(2)
  ROOT s = s32[4] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"),
                 {Ints(DType::kS32, {4}, {1, 2, 3, 4}), Ints(DType::kS32, {3}, {1, 3, 1}),
                  Ints(DType::kS32, {3}, {10, 20, 30})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{1, 42, 3, 24}));
}

TEST(ScatterTest, GeneralCombinerGetsCurrentValueThenUpdateInRowMajorOrder) {
  // combiner(cur, upd) = 10 cur + upd is not a recognised reducer, so the computation is called.
  // Two updates at index 0: (10*1 + 5) = 15, then 10*15 + 7 = 157.
  ir::Literal r = MustRunHlo(R"(
HloModule m
comb {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ten = s32[] constant(10)
  m = s32[] multiply(x, ten)
  ROOT r = s32[] add(m, y)
}
ENTRY e {
  o = s32[3] parameter(0)
  i = s32[2] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
})",
                             {Ints(DType::kS32, {3}, {1, 2, 3}), Ints(DType::kS32, {2}, {0, 0}),
                              Ints(DType::kS32, {2}, {5, 7})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{157, 2, 3}));
}

TEST(ScatterTest, OverwriteCombinerReplacesValues) {
  // ROOT = the update: op[3] = 9, op[0] = 8; the rest keep {2, 3}.
  ir::Literal r = MustRunHlo(R"(
HloModule m
second {
  x = f32[] parameter(0)
  ROOT y = f32[] parameter(1)
}
ENTRY e {
  o = f32[4] parameter(0)
  i = s32[2] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[4] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=second
})",
                             {Vals(DType::kF32, {4}, {1, 2, 3, 4}), Ints(DType::kS32, {2}, {3, 0}),
                              Vals(DType::kF32, {2}, {9, 8})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{8, 2, 3, 9}));
}

TEST(ScatterTest, UpdateWindowDimsAddWholeRows) {
  // op[i,j] = 10i+j; rows: op[2,:] += {1,2,3} -> {21,23,25}; op[0,:] += {4,5,6} -> {4,6,8}.
  ir::Literal r = MustRunHlo(WithAdd(R"(
ENTRY e {
  o = s32[3,3] parameter(0)
  i = s32[2] parameter(1)
  u = s32[2,3] parameter(2)
  ROOT s = s32[3,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"),
                             {Coordinates(3, 3), Ints(DType::kS32, {2}, {2, 0}),
                              Ints(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{4, 6, 8, 10, 11, 12, 21, 23, 25}));
}

TEST(ScatterTest, InsertedWindowDimOneWritesAColumn) {
  // Updates [2 (window over operand dim 0), 1 (scatter dim)]; operand dim 1 is inserted, so the
  // window {7, 8} lands in column idx = 2: op[0,2] = 7, op[1,2] = 8.
  ir::Literal r = MustRunHlo(WithAdd(R"(
ENTRY e {
  o = s32[2,3] parameter(0)
  i = s32[1] parameter(1)
  u = s32[2,1] parameter(2)
  ROOT s = s32[2,3] scatter(o, i, u), update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add
})"),
                             {Ints(DType::kS32, {2, 3}, {0, 0, 0, 0, 0, 0}),
                              Ints(DType::kS32, {1}, {2}), Ints(DType::kS32, {2, 1}, {7, 8})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 0, 7, 0, 0, 8}));
}

TEST(ScatterTest, IndexVectorDimVariantsAndDimsMapping) {
  const char* kText = R"(
ENTRY e {
  o = s32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[3,3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={MAP}, index_vector_dim=IVD, to_apply=add
})";
  auto run = [&](const char* map, const char* ivd, std::vector<int64_t> indices) {
    std::string text = WithAdd(kText);
    text.replace(text.find("MAP"), 3, map);
    text.replace(text.find("IVD"), 3, ivd);
    return AsInts(MustRunHlo(
        text, {Ints(DType::kS32, {3, 3}, std::vector<int64_t>(9, 0)),
               Ints(DType::kS32, {2, 2}, std::move(indices)), Ints(DType::kS32, {2}, {5, 6})}));
  };
  // Start vectors (0,1) and (2,2): op[0,1] = 5, op[2,2] = 6.
  const std::vector<int64_t> expected{0, 5, 0, 0, 0, 0, 0, 0, 6};
  EXPECT_EQ(run("0,1", "1", {0, 1, 2, 2}), expected);  // vector b = row b
  EXPECT_EQ(run("0,1", "0", {0, 2, 1, 2}), expected);  // vector b = column b
  // scatter_dims_to_operand_dims={1,0} swaps the coordinates: (0,1) -> op[1,0] = 5.
  EXPECT_EQ(run("1,0", "1", {0, 1, 2, 2}), (std::vector<int64_t>{0, 0, 0, 5, 0, 0, 0, 0, 6}));
}

TEST(ScatterTest, OutOfBoundsWindowsAreSkippedWhole) {
  // Windows of size 2 into s32[5]: a start is valid in [0, 5-2] = [0, 3]. Start -1, 4 and 5 are
  // skipped entirely (4 is NOT clamped and does not write op[4] partially); start 3 adds {5,6}.
  ir::Literal r =
      MustRunHlo(WithAdd(R"(
ENTRY e {
  o = s32[5] parameter(0)
  i = s32[4] parameter(1)
  u = s32[4,2] parameter(2)
  ROOT s = s32[5] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"),
                 {Ints(DType::kS32, {5}, {0, 0, 0, 0, 0}), Ints(DType::kS32, {4}, {-1, 4, 3, 5}),
                  Ints(DType::kS32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 0, 0, 5, 6}));
}

TEST(ScatterTest, VariadicScatterCombinesPairs) {
  // combiner((a0, a1), (u0, u1)) = (a0 + u0, a1 * u1) at indices {0, 2, 0}:
  //   out0 = {1 + 10 + 30, 2, 3 + 20} = {41, 2, 23};  out1 = {1 * 2 * 4, 1, 3 * 3} = {8, 1, 9}.
  ir::Literal r =
      MustRunHlo(R"(
HloModule m
comb {
  a0 = s32[] parameter(0)
  a1 = s32[] parameter(1)
  u0 = s32[] parameter(2)
  u1 = s32[] parameter(3)
  s = s32[] add(a0, u0)
  p = s32[] multiply(a1, u1)
  ROOT t = (s32[], s32[]) tuple(s, p)
}
ENTRY e {
  o0 = s32[3] parameter(0)
  o1 = s32[3] parameter(1)
  i = s32[3] parameter(2)
  u0 = s32[3] parameter(3)
  u1 = s32[3] parameter(4)
  ROOT s = (s32[3], s32[3]) scatter(o0, o1, i, u0, u1), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
})",
                 {Ints(DType::kS32, {3}, {1, 2, 3}), Ints(DType::kS32, {3}, {1, 1, 3}),
                  Ints(DType::kS32, {3}, {0, 2, 0}), Ints(DType::kS32, {3}, {10, 20, 30}),
                  Ints(DType::kS32, {3}, {2, 3, 4})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{41, 2, 23}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{8, 1, 9}));
}

TEST(ScatterTest, BatchingDimsPairOperandAndIndexBatches) {
  // Row b of the operand takes the updates of index batch b: op[b, idx[b,k]] += u[b,k].
  // idx = {{2,0},{1,1}}, u = {{1,2},{3,4}}: op[0,2] = 1, op[0,0] = 2, op[1,1] = 3 + 4 = 7.
  ir::Literal r = MustRunHlo(
      WithAdd(R"(
ENTRY e {
  o = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = s32[2,2] parameter(2)
  ROOT s = s32[2,3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add
})"),
      {Ints(DType::kS32, {2, 3}, {0, 0, 0, 0, 0, 0}), Ints(DType::kS32, {2, 2}, {2, 0, 1, 1}),
       Ints(DType::kS32, {2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{2, 0, 1, 0, 7, 0}));
}

// ---------------------------------------------------------------------------------------------
// sort

// A module sorting `type[dims]` along `dim` with `ROOT compare(p0, p1), direction=dir`.
std::string SortModule(const std::string& type, const std::string& dir, int dim = 0) {
  return "HloModule m\nless {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + dir +
         "\n}\nENTRY e {\n  p = SHAPE parameter(0)\n  ROOT s = SHAPE sort(p), dimensions={" +
         std::to_string(dim) + "}, to_apply=less\n}\n";
}
std::string WithShape(std::string text, const std::string& shape) {
  for (size_t at = text.find("SHAPE"); at != std::string::npos; at = text.find("SHAPE")) {
    text.replace(at, 5, shape);
  }
  return text;
}

TEST(SortTest, OneOperandAscendingAndDescending) {
  const ir::Literal p = Vals(DType::kF32, {5}, {3, 1, 4, 1, 5});
  EXPECT_EQ(AsDoubles(MustRunHlo(WithShape(SortModule("f32", "LT"), "f32[5]"), {p})),
            (std::vector<double>{1, 1, 3, 4, 5}));
  EXPECT_EQ(AsDoubles(MustRunHlo(WithShape(SortModule("f32", "GT"), "f32[5]"), {p})),
            (std::vector<double>{5, 4, 3, 1, 1}));
}

TEST(SortTest, GeneralComparatorOrdersByItsOwnKey) {
  // less(a, b) = |a| < |b|: {-3, 1, -2, 0} by magnitude is {0, 1, -2, -3}.
  ir::Literal r = MustRunHlo(R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  aa = s32[] abs(a)
  ab = s32[] abs(b)
  ROOT c = pred[] compare(aa, ab), direction=LT
}
ENTRY e {
  p = s32[4] parameter(0)
  ROOT s = s32[4] sort(p), dimensions={0}, to_apply=less
})",
                             {Ints(DType::kS32, {4}, {-3, 1, -2, 0})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{0, 1, -2, -3}));
}

TEST(SortTest, KeyValueSortMovesValuesWithKeys) {
  // keys {3,1,2,1,0}, values {0..4}: sorted keys {0,1,1,2,3} carry values {4,1,3,2,0}
  // (the two 1s keep their order: values 1 then 3).
  ir::Literal r = MustRunHlo(
      R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = f32[] parameter(2)
  vb = f32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[5] parameter(0)
  v = f32[5] parameter(1)
  ROOT s = (s32[5], f32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
})",
      {Ints(DType::kS32, {5}, {3, 1, 2, 1, 0}), Vals(DType::kF32, {5}, {0, 1, 2, 3, 4})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{0, 1, 1, 2, 3}));
  EXPECT_EQ(AsDoubles(r.tuple_element(1)), (std::vector<double>{4, 1, 3, 2, 0}));
}

TEST(SortTest, StableSortKeepsEqualKeysInInputOrder) {
  // Keys alternate 2,1,...; values 0..7 record the input position. Ascending by key, equal keys
  // in input order: key 1 at positions {1,3,5,7}, then key 2 at {0,2,4,6}. The descending
  // comparator compares negated keys (not a plain compare, so the computation is called):
  // key 2 first at {0,2,4,6}, then key 1 at {1,3,5,7}.
  const char* kText = R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = s32[] parameter(2)
  vb = s32[] parameter(3)
  KEYS
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  k = s32[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT s = (s32[8], s32[8]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
})";
  const std::vector<ir::Literal> args{Ints(DType::kS32, {8}, {2, 1, 2, 1, 2, 1, 2, 1}),
                                      Ints(DType::kS32, {8}, {0, 1, 2, 3, 4, 5, 6, 7})};
  std::string ascending = kText;
  ascending.replace(ascending.find("KEYS"), 4,
                    "x = s32[] add(a, a)\n  y = s32[] add(b, b)");  // 2a < 2b iff a < b
  EXPECT_EQ(AsInts(MustRunHlo(ascending, args).tuple_element(1)),
            (std::vector<int64_t>{1, 3, 5, 7, 0, 2, 4, 6}));
  std::string descending = kText;
  descending.replace(descending.find("KEYS"), 4, "x = s32[] negate(a)\n  y = s32[] negate(b)");
  EXPECT_EQ(AsInts(MustRunHlo(descending, args).tuple_element(1)),
            (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(SortTest, SortsAlongANonLastDimension) {
  // dims [3,2] sorted along dim 0: each column on its own. col 0 {3,1,2} -> {1,2,3};
  // col 1 {0,2,1} -> {0,1,2}; row-major {1,0, 2,1, 3,2}.
  EXPECT_EQ(AsInts(MustRunHlo(WithShape(SortModule("s32", "LT", 0), "s32[3,2]"),
                              {Ints(DType::kS32, {3, 2}, {3, 0, 1, 2, 2, 1})})),
            (std::vector<int64_t>{1, 0, 2, 1, 3, 2}));
  // dims [2,3,2] along dim 1: the six (a, c) columns of length 3 sort independently.
  // a=0: c0 {5,1,3} -> {1,3,5}, c1 {0,4,2} -> {0,2,4}; a=1: c0 {9,7,8} -> {7,8,9}, c1 {6,6,1}
  // -> {1,6,6}.
  EXPECT_EQ(
      AsInts(MustRunHlo(WithShape(SortModule("s32", "LT", 1), "s32[2,3,2]"),
                        {Ints(DType::kS32, {2, 3, 2}, {5, 0, 1, 4, 3, 2, 9, 6, 7, 6, 8, 1})})),
      (std::vector<int64_t>{1, 0, 3, 2, 5, 4, 7, 1, 8, 6, 9, 6}));
}

TEST(SortTest, TotalOrderSeparatesAdjacentDoublesAndSignedZeros) {
  // TOTALORDER orders -0 before +0, and must tell apart doubles one ulp apart:
  // 1 + 2^-52 sorts after 1.
  const double next = 1.0 + std::ldexp(1.0, -52);
  std::string text = WithShape(SortModule("f64", "LT"), "f64[4]");
  text.replace(text.find("direction=LT"), 12, "direction=LT, type=TOTALORDER");
  ir::Literal r = MustRunHlo(text, {Vals(DType::kF64, {4}, {next, 1.0, 0.0, -0.0})});
  const std::vector<double> v = AsDoubles(r);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(v[0] == 0.0 && std::signbit(v[0])) << v[0];
  EXPECT_TRUE(v[1] == 0.0 && !std::signbit(v[1])) << v[1];
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], next);
}

}  // namespace
}  // namespace alpa::interp::testing
