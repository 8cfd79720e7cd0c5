// reduce, reduce-window and select-and-scatter against hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>

#include "ir/builder.h"
#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Scalar reducers and comparators shared by the modules below (prepended to each).
constexpr std::string_view kRegions = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
)";

std::vector<double> RunEntry(std::string_view entry, std::vector<ir::Literal> args) {
  return AsDoubles(MustRunHlo(std::string(kRegions) + std::string(entry), args));
}
ir::Literal F32(std::vector<int64_t> dims, std::vector<double> values) {
  return Vals(DType::kF32, std::move(dims), std::move(values));
}

// The evaluation fails, and the message names the instruction (%r) and says `what`.
void ExpectError(std::string_view entry, std::vector<ir::Literal> args, std::string_view what) {
  Result<ir::Literal> r = RunHlo(std::string(kRegions) + std::string(entry), args);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), ::testing::HasSubstr("%r ("));
  EXPECT_THAT(r.status().ToString(), ::testing::HasSubstr(what));
}

// ---------------------------------------------------------------------------------------------
// reduce. x = [[1,2,3],[4,5,6]] unless said otherwise.

TEST(ReduceTest, SumOverOneDimensionKeepsTheOther) {
  const ir::Literal x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Rows: 1+2+3 = 6, 4+5+6 = 15.  Columns: 1+4, 2+5, 3+6.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
})",
                     {x}),
            (std::vector<double>{6, 15}));
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add
})",
                     {x}),
            (std::vector<double>{5, 7, 9}));
}

TEST(ReduceTest, SeveralDimensionsReduceTogether) {
  // x[i,j,k] = 6i + 2j + k + 1 (dims [2,3,2]); r[j] = sum_{i,k}:
  //   j0: 1+2+7+8 = 18, j1: 3+4+9+10 = 26, j2: 5+6+11+12 = 34.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[2,3,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={2,0}, to_apply=add
})",
                     {F32({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}),
            (std::vector<double>{18, 26, 34}));
}

TEST(ReduceTest, AllDimensionsGiveAScalar) {
  // max(-inf, 1, -5, 3, 7, 0, 2) = 7.
  ir::Literal r = MustRunHlo(std::string(kRegions) + R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=max
})",
                             {F32({2, 3}, {1, -5, 3, 7, 0, 2})});
  EXPECT_EQ(r.shape().rank(), 0);
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{7}));
}

TEST(ReduceTest, EmptyReducedDimensionGivesTheInit) {
  // Nothing to fold: every result element is the init.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[2,0] parameter(0)
  z = f32[] constant(5)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
})",
                     {F32({2, 0}, {})}),
            (std::vector<double>{5, 5}));
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[0,3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=max
})",
                     {F32({0, 3}, {})}),
            (std::vector<double>{-kInf, -kInf, -kInf}));
}

TEST(ReduceTest, UnrecognisedReducerRunsTheComputation) {
  // max(|acc|, |x|) is no fast-path reducer: rows [-7,2] -> 7 and [3,-1] -> 3 (init 0).
  EXPECT_EQ(RunEntry(R"(maxabs {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  aa = f32[] abs(a)
  ab = f32[] abs(b)
  ROOT r = f32[] maximum(aa, ab)
}
ENTRY e {
  x = f32[2,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=maxabs
})",
                     {F32({2, 2}, {-7, 2, 3, -1})}),
            (std::vector<double>{7, 3}));
}

// (value, index) argmax: the larger value wins, ties go to the smaller index.
constexpr std::string_view kArgmax = R"(argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick_a = pred[] or(gt, tie)
  v = f32[] select(pick_a, a, b)
  i = s32[] select(pick_a, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
)";

TEST(ReduceTest, VariadicArgmaxReducesValueAndIndexTogether) {
  // values [[1,5,5],[7,0,7]], indices = column number.
  //   Over dim 1: row0 max 5 at columns 1 and 2 -> (5,1); row1 max 7 at 0 and 2 -> (7,0).
  //   Over dim 0 (indices = row number): columns (1|7) -> (7,1), (5|0) -> (5,0), (5|7) -> (7,1).
  const std::string over_columns = std::string(kArgmax) + R"(ENTRY e {
  v = f32[2,3] parameter(0)
  i = s32[2,3] iota(), iota_dimension=1
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(v, i, z, zi), dimensions={1}, to_apply=argmax
})";
  const ir::Literal values = F32({2, 3}, {1, 5, 5, 7, 0, 7});
  ir::Literal r = MustRunHlo(std::string(kRegions) + over_columns, {values});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{5, 7}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 0}));
  const std::string over_rows = std::string(kArgmax) + R"(ENTRY e {
  v = f32[2,3] parameter(0)
  i = s32[2,3] iota(), iota_dimension=0
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(v, i, z, zi), dimensions={0}, to_apply=argmax
})";
  r = MustRunHlo(std::string(kRegions) + over_rows, {values});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{7, 5, 7}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{1, 0, 1}));
}

TEST(ReduceTest, MalformedReduceIsAnErrorNamingTheInstruction) {
  const ir::Literal x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={2}, to_apply=add
})",
              {x}, "dimension 2 is out of range");
  ExpectError(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0,0}, to_apply=add
})",
              {x}, "repeated");
  // Reducing dim 1 of [2,3] leaves [2], not [3].
  ExpectError(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add
})",
              {x}, "does not reduce to");
  ExpectError(R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[2] constant({0, 0})
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
})",
              {x}, "inits must be scalars");
}

// ComputationBuilder::Sum of 4096 ones of `dtype`, or a plain reduce in `dtype` when `plain`.
double SumOfOnes(DType dtype, bool plain) {
  ir::ModuleBuilder mb("m");
  ir::ComputationBuilder b = mb.NewComputation("main");
  ir::Instruction* ones = b.Broadcast(b.ConstantScalar(dtype, 1), {64, 64}, {});
  ir::Instruction* sum = plain ? b.Reduce(ones, b.ConstantScalar(dtype, 0), {0, 1},
                                          mb.ScalarReducer(ir::Opcode::kAdd, dtype))
                               : b.Sum(ones, {0, 1});
  Result<ir::Computation*> main = b.Build(sum);
  EXPECT_TRUE(main.ok()) << main.status().ToString();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*main);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  Result<ir::Literal> result = EvaluateModule(**module, {});
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? AsDoubles(*result)[0] : -1;
}

TEST(ReduceTest, BuilderSumOfSixteenBitFloatsAccumulatesInF32) {
  // f16 has 11 significant bits: 2048 + 1 rounds back to 2048, so a sum kept in f16 stops there.
  EXPECT_EQ(SumOfOnes(DType::kF16, /*plain=*/true), 2048);
  EXPECT_EQ(SumOfOnes(DType::kF16, /*plain=*/false), 4096);
  // bf16 has 8: 256 + 1 rounds back to 256.
  EXPECT_EQ(SumOfOnes(DType::kBF16, /*plain=*/true), 256);
  EXPECT_EQ(SumOfOnes(DType::kBF16, /*plain=*/false), 4096);
  EXPECT_EQ(SumOfOnes(DType::kF32, /*plain=*/false), 4096);
}

// ---------------------------------------------------------------------------------------------
// reduce-window

TEST(ReduceWindowTest, MaxPoolTwoByTwoStrideTwo) {
  // x[r][c] = 4r + c + 1 (4x4); window maxima are the bottom-right corners: 6, 8, 14, 16.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max
})",
                     {F32({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})}),
            (std::vector<double>{6, 8, 14, 16}));
}

TEST(ReduceWindowTest, SumWithStrideAndPadding) {
  // p = [0,1,2,3,4,5,0]; (7-3)/2+1 = 3 windows at 0,2,4: 0+1+2, 2+3+4, 4+5+0.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=3 stride=2 pad=1_1}, to_apply=add
})",
                     {F32({5}, {1, 2, 3, 4, 5})}),
            (std::vector<double>{3, 9, 9}));
}

TEST(ReduceWindowTest, PaddingIsNotAValueForMax) {
  // x = [-1,-2,-3] padded 1_1, windows of 2: (pad,-1) -1, (-1,-2) -1, (-2,-3) -2, (-3,pad) -3.
  // A zero pad would give 0 at both ends.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 pad=1_1}, to_apply=max
})",
                     {F32({3}, {-1, -2, -3})}),
            (std::vector<double>{-1, -1, -2, -3}));
}

TEST(ReduceWindowTest, WindowDilationSkipsElements) {
  // Taps 2 apart (span 3): 5-3+1 = 3 windows, x[o] + x[o+2]: 1+3, 2+4, 3+5.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 rhs_dilate=2}, to_apply=add
})",
                     {F32({5}, {1, 2, 3, 4, 5})}),
            (std::vector<double>{4, 6, 8}));
  // 2-D, taps 2 apart both ways over x[r][c] = 4r + c + 1 (4x4): 2x2 outputs,
  // x[i][j] + x[i][j+2] + x[i+2][j] + x[i+2][j+2]: 1+3+9+11 = 24, 2+4+10+12 = 28,
  // 5+7+13+15 = 40, 6+8+14+16 = 44.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 rhs_dilate=2x2}, to_apply=add
})",
                     {F32({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})}),
            (std::vector<double>{24, 28, 40, 44}));
}

TEST(ReduceWindowTest, BaseDilationHolesHoldNoValue) {
  // x = [1,2,3] dilated by 2 and padded 1_0: [pad,1,h,2,h,3] (6), windows of 2:
  //   (pad,1) 1, (1,h) 1, (h,2) 2, (2,h) 2, (h,3) 3.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce-window(x, z), window={size=2 pad=1_0 lhs_dilate=2}, to_apply=add
})",
                     {F32({3}, {1, 2, 3})}),
            (std::vector<double>{1, 1, 2, 2, 3}));
  // Max over negatives: holes are not zeros. [-1,h,-2,h,-3], windows of 2 with stride 2:
  // (-1,h) -1, (-2,h) -2.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2] reduce-window(x, z), window={size=2 stride=2 lhs_dilate=2}, to_apply=max
})",
                     {F32({3}, {-1, -2, -3})}),
            (std::vector<double>{-1, -2}));
}

TEST(ReduceWindowTest, VariadicArgmaxPoolKeepsValueAndIndex) {
  // values [3,1,4,1,5], indices 0..4, windows of 2 with stride 1:
  // (3,1) -> (3,0), (1,4) -> (4,2), (4,1) -> (4,2), (1,5) -> (5,4).
  ir::Literal r = MustRunHlo(std::string(kRegions) + std::string(kArgmax) + R"(ENTRY e {
  v = f32[5] parameter(0)
  i = s32[5] iota(), iota_dimension=0
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[4], s32[4]) reduce-window(v, i, z, zi), window={size=2}, to_apply=argmax
})",
                             {F32({5}, {3, 1, 4, 1, 5})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{3, 4, 4, 5}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{0, 2, 2, 4}));
}

TEST(ReduceWindowTest, WindowLargerThanTheInputGivesAnEmptyResult) {
  // A window of 4 does not fit in 3 elements: (3 - 4) < 0, so no window and a [0] result.
  ir::Literal r = MustRunHlo(std::string(kRegions) + R"(ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[0] reduce-window(x, z), window={size=4}, to_apply=add
})",
                             {F32({3}, {1, 2, 3})});
  EXPECT_EQ(r.shape().dims(), (std::vector<int64_t>{0}));
}

TEST(ReduceWindowTest, WrongResultShapeIsAnErrorNamingTheInstruction) {
  // 5 - 2 + 1 = 4 windows, not 3.
  ExpectError(R"(ENTRY e {
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2}, to_apply=add
})",
              {F32({5}, {1, 2, 3, 4, 5})}, "gives dims [4]");
  ExpectError(R"(ENTRY e {
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,1] reduce-window(x, z), window={size=2x1}, to_apply=add
})",
              {F32({5}, {1, 2, 3, 4, 5})}, "window has 2 dimensions");
}

// ---------------------------------------------------------------------------------------------
// select-and-scatter: the gradient of a max pool.

TEST(SelectAndScatterTest, MaxPoolGradientGoesToEachWindowMaximum) {
  // 2x2 windows, stride 2, over
  //   [[1,5,2,0],[3,4,8,1],[0,9,2,2],[7,1,3,6]]:
  // maxima 5 at (0,1), 8 at (1,2), 9 at (2,1), 6 at (3,3) receive 10, 20, 30, 40.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[4,4] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,4] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge,
      scatter=add
})",
                     {F32({4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 0, 9, 2, 2, 7, 1, 3, 6}),
                      F32({2, 2}, {10, 20, 30, 40})}),
            (std::vector<double>{0, 10, 0, 0, 0, 0, 20, 0, 0, 30, 0, 0, 0, 0, 0, 40}));
}

TEST(SelectAndScatterTest, OverlappingWindowsAccumulateIntoTheSharedMaximum) {
  // Windows of 3, stride 1, over [1,3,2,5,4]: [1,3,2] -> 3 (index 1), [3,2,5] -> 5 (index 3),
  // [2,5,4] -> 5 (index 3). Sources 10, 20, 30 on top of the init 1: [1, 11, 1, 51, 1].
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[5] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] constant(1)
  ROOT r = f32[5] select-and-scatter(x, s, z), window={size=3}, select=ge, scatter=add
})",
                     {F32({5}, {1, 3, 2, 5, 4}), F32({3}, {10, 20, 30})}),
            (std::vector<double>{1, 11, 1, 51, 1}));
}

TEST(SelectAndScatterTest, TiesSelectTheFirstElementInWindowOrder) {
  // select = ge keeps the current pick while pick >= next: [2,2] -> index 0; [1,2] -> index 3.
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add
})",
                     {F32({4}, {2, 2, 1, 2}), F32({2}, {7, 9})}),
            (std::vector<double>{7, 0, 0, 9}));
}

TEST(SelectAndScatterTest, PaddingIsNeverSelected) {
  // [-3,-1,-2] padded 1_1, windows of 3, stride 1: (pad,-3,-1), (-3,-1,-2), (-1,-2,pad) all
  // select -1 (index 1), which receives 1 + 2 + 3 = 6; a zero pad would have won instead.
  // The select here is `b <= a`, a comparator the fast path does not match, so the
  // computation itself runs.
  EXPECT_EQ(RunEntry(R"(ge_swapped {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(b, a), direction=LE
}
ENTRY e {
  x = f32[3] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[3] select-and-scatter(x, s, z), window={size=3 pad=1_1}, select=ge_swapped,
      scatter=add
})",
                     {F32({3}, {-3, -1, -2}), F32({3}, {1, 2, 3})}),
            (std::vector<double>{0, 6, 0}));
  // 2-D, 2x2 windows, stride 2, padded 1_1 both ways over [[1,2],[3,4]] (4x4 padded):
  // each window holds one real element, which receives its source: [[10,20],[30,40]].
  EXPECT_EQ(RunEntry(R"(ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[2,2] select-and-scatter(x, s, z), window={size=2x2 stride=2x2 pad=1_1x1_1},
      select=ge, scatter=add
})",
                     {F32({2, 2}, {-1, -2, -3, -4}), F32({2, 2}, {10, 20, 30, 40})}),
            (std::vector<double>{10, 20, 30, 40}));
}

TEST(SelectAndScatterTest, SourceNotMatchingTheWindowsIsAnErrorNamingTheInstruction) {
  // 4 elements in windows of 2, stride 2, make 2 windows; a source of 3 does not fit.
  ExpectError(R"(ENTRY e {
  x = f32[4] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add
})",
              {F32({4}, {1, 2, 3, 4}), F32({3}, {1, 2, 3})}, "gives dims [2]");
}

}  // namespace
}  // namespace alpa::interp::testing
