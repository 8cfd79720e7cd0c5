// dot and convolution against hand-computed values. Each expectation carries its arithmetic.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

// One argument: dims and row-major values.
struct Array {
  std::vector<int64_t> dims;
  std::vector<double> values;
};

std::vector<ir::Literal> Literals(DType dtype, const std::vector<Array>& args) {
  std::vector<ir::Literal> literals;
  for (const Array& a : args) literals.push_back(Vals(dtype, a.dims, a.values));
  return literals;
}

// Evaluates `text` with every "f32" in it replaced by `type` (and the arguments built as `dtype`).
std::vector<double> RunAs(DType dtype, std::string_view type, std::string text,
                          const std::vector<Array>& args) {
  for (size_t at = text.find("f32"); at != std::string::npos;
       at = text.find("f32", at + type.size())) {
    text.replace(at, 3, type);
  }
  return AsDoubles(MustRunHlo(text, Literals(dtype, args)));
}
std::vector<double> RunF32(const std::string& text, const std::vector<Array>& args) {
  return RunAs(DType::kF32, "f32", text, args);
}

// Convolutions run in f32 (oneDNN wherever it applies) and in s32 (always the exact reference
// loop), so a mistake in either kernel path shows against the same hand-computed values.
void ExpectConv(const std::string& text, const std::vector<Array>& args,
                const std::vector<double>& expected) {
  EXPECT_EQ(RunAs(DType::kF32, "f32", text, args), expected) << "f32 (oneDNN path)";
  EXPECT_EQ(RunAs(DType::kS32, "s32", text, args), expected) << "s32 (reference path)";
}

// The evaluation fails, and the message names the instruction (%r) and says `what`.
void ExpectError(const std::string& text, const std::vector<Array>& args, std::string_view what) {
  Result<ir::Literal> r = RunHlo(text, Literals(DType::kF32, args));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), ::testing::HasSubstr("%r ("));
  EXPECT_THAT(r.status().ToString(), ::testing::HasSubstr(what));
}

// ---------------------------------------------------------------------------------------------
// dot

// A module computing `ROOT r = <result> dot(a, b), <dims>` of parameters a: <lhs>, b: <rhs>.
std::string DotHlo(std::string_view lhs, std::string_view rhs, std::string_view result,
                   std::string_view dims) {
  return fmt::format(
      "HloModule m\nENTRY e {{\n  a = {} parameter(0)\n  b = {} parameter(1)\n"
      "  ROOT r = {} dot(a, b){}{}\n}}",
      lhs, rhs, result, dims.empty() ? "" : ", ", dims);
}

TEST(DotTest, MatrixProductContractsLhsColumnsWithRhsRows) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]]:
  // [0,0] = 7+18+33 = 58, [0,1] = 8+20+36 = 64, [1,0] = 28+45+66 = 139, [1,1] = 32+50+72 = 154.
  EXPECT_EQ(RunF32(DotHlo("f32[2,3]", "f32[3,2]", "f32[2,2]",
                          "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                   {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {7, 8, 9, 10, 11, 12}}}),
            (std::vector<double>{58, 64, 139, 154}));
}

TEST(DotTest, TwoBatchDimsPairInDimensionNumberOrder) {
  // lhs [b0,b1,m=1,k=2]: [1,2],[3,4],[5,6],[7,8]; rhs [.,.,k=2,n=1]: [1,1],[1,-1],[2,0],[0,3].
  const std::vector<Array> args = {{{2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}},
                                   {{2, 2, 2, 1}, {1, 1, 1, -1, 2, 0, 0, 3}}};
  // Batch dims {0,1} with {0,1}: [1,2].[1,1] = 3, [3,4].[1,-1] = -1, [5,6].[2,0] = 10,
  // [7,8].[0,3] = 24.
  EXPECT_EQ(RunF32(DotHlo("f32[2,2,1,2]", "f32[2,2,2,1]", "f32[2,2,1,1]",
                          "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, "
                          "rhs_contracting_dims={2}"),
                   args),
            (std::vector<double>{3, -1, 10, 24}));
  // rhs_batch_dims={1,0}: result [i,j] pairs lhs[i,j] with rhs[j,i]:
  // [1,2].[1,1] = 3, [3,4].[2,0] = 6, [5,6].[1,-1] = -1, [7,8].[0,3] = 24.
  EXPECT_EQ(RunF32(DotHlo("f32[2,2,1,2]", "f32[2,2,2,1]", "f32[2,2,1,1]",
                          "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,0}, "
                          "rhs_contracting_dims={2}"),
                   args),
            (std::vector<double>{3, 6, -1, 24}));
}

TEST(DotTest, ContractingDimFirstAndBatchDimsLastGiveBatchFreeFreeResult) {
  // lhs[k,m,b] = 4k + 2m + b + 1 (dims [3,2,2]); rhs[n,b,k] (dims [2,2,3]):
  //   n=0: b0 [1,0,0], b1 [0,1,0];  n=1: b0 [1,1,1], b1 [0,0,2].
  // r[b,m,n] = sum_k lhs[k,m,b] * rhs[n,b,k]; lhs columns over k: (b0,m0) 1,5,9; (b0,m1) 3,7,11;
  // (b1,m0) 2,6,10; (b1,m1) 4,8,12.
  //   b0: m0 [1, 1+5+9=15], m1 [3, 3+7+11=21];  b1: m0 [6, 2*10=20], m1 [8, 2*12=24].
  EXPECT_EQ(RunF32(DotHlo("f32[3,2,2]", "f32[2,2,3]", "f32[2,2,2]",
                          "lhs_batch_dims={2}, lhs_contracting_dims={0}, rhs_batch_dims={1}, "
                          "rhs_contracting_dims={2}"),
                   {{{3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
                    {{2, 2, 3}, {1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 2}}}),
            (std::vector<double>{1, 15, 3, 21, 6, 20, 8, 24}));
}

TEST(DotTest, SeveralContractingDimsPairInDimensionNumberOrder) {
  // lhs[m,a,b] = 1..8 ([2,2,2]); rhs[b,a] = [[1,0],[10,0]]; lhs dims {1,2} pair with rhs {1,0}:
  // r[m] = sum_{a,b} lhs[m,a,b] rhs[b,a] = lhs[m,0,0]*1 + lhs[m,0,1]*10: 1+20 = 21, 5+60 = 65.
  // (Pairing lhs dim 1 with rhs dim 0 would give lhs[m,0,0] + 10 lhs[m,1,0] = 31, 75.)
  EXPECT_EQ(RunF32(DotHlo("f32[2,2,2]", "f32[2,2]", "f32[2]",
                          "lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}"),
                   {{{2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}}, {{2, 2}, {1, 0, 10, 0}}}),
            (std::vector<double>{21, 65}));
}

TEST(DotTest, VectorsGiveInnerAndOuterProducts) {
  // [1,2,3].[4,5,6] = 4 + 10 + 18 = 32.
  EXPECT_EQ(RunF32(DotHlo("f32[3]", "f32[3]", "f32[]",
                          "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                   {{{3}, {1, 2, 3}}, {{3}, {4, 5, 6}}}),
            (std::vector<double>{32}));
  // No contracting dims: the outer product [1,2] x [3,4,5] = [[3,4,5],[6,8,10]].
  EXPECT_EQ(RunF32(DotHlo("f32[2]", "f32[3]", "f32[2,3]", ""), {{{2}, {1, 2}}, {{3}, {3, 4, 5}}}),
            (std::vector<double>{3, 4, 5, 6, 8, 10}));
}

TEST(DotTest, MatrixVectorAndVectorMatrix) {
  const Array m = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  // [[1,2,3],[4,5,6]] . [2,0,1] = [2+3, 8+6] = [5, 14].
  EXPECT_EQ(RunF32(DotHlo("f32[2,3]", "f32[3]", "f32[2]",
                          "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                   {m, {{3}, {2, 0, 1}}}),
            (std::vector<double>{5, 14}));
  // [1,2] . [[1,2,3],[4,5,6]] = [1+8, 2+10, 3+12] = [9, 12, 15].
  EXPECT_EQ(RunF32(DotHlo("f32[2]", "f32[2,3]", "f32[3]",
                          "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                   {{{2}, {1, 2}}, m}),
            (std::vector<double>{9, 12, 15}));
}

TEST(DotTest, HalfPrecisionOperandsAccumulateInF32AndRoundOnce) {
  const std::string text = DotHlo("f32[1,3]", "f32[3,1]", "f32[1,1]",
                                  "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  // f16 has an 11-bit significand: above 2048 the spacing is 2. 2048 + 1 + 1 = 2050 in f32,
  // exact in f16; summing in f16 would give 2048 (2048 + 1 = 2049 rounds to even 2048, twice).
  EXPECT_EQ(RunAs(DType::kF16, "f16", text, {{{1, 3}, {2048, 1, 1}}, {{3, 1}, {1, 1, 1}}}),
            (std::vector<double>{2050}));
  // bf16 has 8 bits: spacing 2 above 256, so 256 + 1 + 1 = 258 (bf16 sums would stay at 256).
  EXPECT_EQ(RunAs(DType::kBF16, "bf16", text, {{{1, 3}, {256, 1, 1}}, {{3, 1}, {1, 1, 1}}}),
            (std::vector<double>{258}));
  // f16 operands with an f32 result keep the unrounded sum 2048 + 1 + 0.5 = 2049.5.
  ir::Literal r =
      MustRunHlo(DotHlo("f16[1,3]", "f16[3,1]", "f32[1,1]",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                 {Vals(DType::kF16, {1, 3}, {2048, 1, 1}), Vals(DType::kF16, {3, 1}, {1, 1, 0.5})});
  EXPECT_EQ(r.shape().dtype(), DType::kF32);
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{2049.5}));
}

TEST(DotTest, IntegerDotIsExactAndWrapsInItsType) {
  // [[1,-2],[3,4]] x [[5,6],[-7,8]] = [[5+14, 6-16], [15-28, 18+32]] = [[19,-10],[-13,50]].
  EXPECT_EQ(RunAs(DType::kS32, "s32",
                  DotHlo("f32[2,2]", "f32[2,2]", "f32[2,2]",
                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                  {{{2, 2}, {1, -2, 3, 4}}, {{2, 2}, {5, 6, -7, 8}}}),
            (std::vector<double>{19, -10, -13, 50}));
  const std::vector<ir::Literal> s8_args = {Ints(DType::kS8, {2}, {100, 100}),
                                            Ints(DType::kS8, {2}, {2, 1})};
  // s8: 100*2 + 100*1 = 300 wraps modulo 256 to 44.
  EXPECT_EQ(AsInts(MustRunHlo(DotHlo("s8[2]", "s8[2]", "s8[]",
                                     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                              s8_args)),
            (std::vector<int64_t>{44}));
  // With an s32 result the operands widen first: 300, no wrap.
  EXPECT_EQ(AsInts(MustRunHlo(DotHlo("s8[2]", "s8[2]", "s32[]",
                                     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                              s8_args)),
            (std::vector<int64_t>{300}));
}

TEST(DotTest, EmptyContractionGivesZerosAndEmptyFreeDimGivesEmptyResult) {
  // K = 0: each element of [2,3] is the empty sum, 0.
  EXPECT_EQ(RunF32(DotHlo("f32[2,0]", "f32[0,3]", "f32[2,3]",
                          "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                   {{{2, 0}, {}}, {{0, 3}, {}}}),
            (std::vector<double>(6, 0.0)));
  ir::Literal empty =
      MustRunHlo(DotHlo("f32[0,2,3]", "f32[0,3,4]", "f32[0,2,4]",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}"),
                 {Vals(DType::kF32, {0, 2, 3}, {}), Vals(DType::kF32, {0, 3, 4}, {})});
  EXPECT_EQ(empty.shape().dims(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(empty.element_count(), 0);
}

TEST(DotTest, MalformedDimensionNumbersAreErrorsNamingTheDot) {
  const std::vector<Array> args = {{{2, 3}, {1, 2, 3, 4, 5, 6}},
                                   {{4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}}};
  ExpectError(DotHlo("f32[2,3]", "f32[4,2]", "f32[2,2]",
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
              args, "contracting dims 1 and 0 differ in size");
  ExpectError(DotHlo("f32[2,3]", "f32[4,2]", "f32[2,2]",
                     "lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
              args, "out of range");
  ExpectError(DotHlo("f32[2,3]", "f32[4,2]", "f32[2,2]",
                     "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
              args, "as many batch and contracting dims");
  // [2,3] x [3,2] gives [2,2], not the declared [2,3].
  ExpectError(DotHlo("f32[2,3]", "f32[3,2]", "f32[2,3]",
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
              {args[0], {{3, 2}, {1, 2, 3, 4, 5, 6}}}, "does not have the dot's dims [2,2]");
}

// ---------------------------------------------------------------------------------------------
// convolution. The 1-D cases use x = [1,2,3,4,5] and kernel [1,10] unless said otherwise, so
// that each output out[o] = sum_k x[u(o,k)] * kernel[k] shows which inputs it read in its digits.

// A one-channel 1-D convolution: x f32[1,W,1] and kernel f32[K,1,1] (b0f_0io->b0f) give
// f32[1,out,1]; `window` is the text inside window={...}.
std::string Conv1D(int64_t w, int64_t k, int64_t out, std::string_view window) {
  return fmt::format(R"(HloModule m
ENTRY e {{
  x = f32[1,{},1] parameter(0)
  k = f32[{},1,1] parameter(1)
  ROOT r = f32[1,{},1] convolution(x, k), window={{{}}}, dim_labels=b0f_0io->b0f
}})",
                     w, k, out, window);
}
std::vector<Array> Conv1DArgs(std::vector<double> x, std::vector<double> kernel) {
  const auto w = static_cast<int64_t>(x.size());
  const auto k = static_cast<int64_t>(kernel.size());
  return {{{1, w, 1}, std::move(x)}, {{k, 1, 1}, std::move(kernel)}};
}

TEST(ConvolutionTest, ValidWindowSlidesOverTheInput) {
  // out[o] = x[o] + 10 x[o+1]: 1+20, 2+30, 3+40, 4+50.
  ExpectConv(Conv1D(5, 2, 4, "size=2"), Conv1DArgs({1, 2, 3, 4, 5}, {1, 10}), {21, 32, 43, 54});
}

TEST(ConvolutionTest, StrideAndPaddingPickEveryOtherPaddedWindow) {
  // Padded p = [0,1,2,3,4,5,0] (7); outputs (7-3)/2+1 = 3; kernel [1,10,100];
  // out[o] = p[2o] + 10 p[2o+1] + 100 p[2o+2]: 0+10+200, 2+30+400, 4+50+0.
  ExpectConv(Conv1D(5, 3, 3, "size=3 stride=2 pad=1_1"), Conv1DArgs({1, 2, 3, 4, 5}, {1, 10, 100}),
             {210, 432, 54});
}

TEST(ConvolutionTest, NegativePaddingCropsTheInput) {
  // pad -1_1: p = [2,3,4,5,0] (x loses its first element, gains a zero): 2+30, 3+40, 4+50, 5+0.
  ExpectConv(Conv1D(5, 2, 4, "size=2 pad=-1_1"), Conv1DArgs({1, 2, 3, 4, 5}, {1, 10}),
             {32, 43, 54, 5});
  // pad -2_-1: p = [3,4] (first two and last dropped): one output 3 + 40.
  ExpectConv(Conv1D(5, 2, 1, "size=2 pad=-2_-1"), Conv1DArgs({1, 2, 3, 4, 5}, {1, 10}), {43});
}

TEST(ConvolutionTest, LhsDilationInsertsHolesBetweenInputs) {
  // x = [1,2,3] dilated by 2 and padded 1_1: p = [0,1,0,2,0,3,0] (7), 6 outputs
  // out[o] = p[o] + 10 p[o+1]: 10, 1, 20, 2, 30, 3.
  ExpectConv(Conv1D(3, 2, 6, "size=2 pad=1_1 lhs_dilate=2"), Conv1DArgs({1, 2, 3}, {1, 10}),
             {10, 1, 20, 2, 30, 3});
}

TEST(ConvolutionTest, RhsDilationSpreadsTheKernelTaps) {
  // Taps 2 apart: window span 3, 5-3+1 = 3 outputs, out[o] = x[o] + 10 x[o+2]: 31, 42, 53.
  ExpectConv(Conv1D(5, 2, 3, "size=2 rhs_dilate=2"), Conv1DArgs({1, 2, 3, 4, 5}, {1, 10}),
             {31, 42, 53});
}

TEST(ConvolutionTest, WindowReversalFlipsTheKernel) {
  // Reversed kernel [10,1]: out[o] = 10 x[o] + x[o+1]: 10+2, 20+3.
  ExpectConv(Conv1D(3, 2, 2, "size=2 rhs_reversal=1"), Conv1DArgs({1, 2, 3}, {1, 10}), {12, 23});
}

// 2-D: x[r][c] = 3r + c + 1 = [[1,2,3],[4,5,6],[7,8,9]]; output feature 0 has kernel
// [[1,2],[3,4]] and feature 1 all ones. Window 2x2, stride 2x1: output spatial
// ((3-2)/2+1) x ((3-2)/1+1) = 1x2.
//   f0: j=0: 1*1 + 2*2 + 4*3 + 5*4 = 37;  j=1: 2*1 + 3*2 + 5*3 + 6*4 = 47.
//   f1: j=0: 1+2+4+5 = 12;                j=1: 2+3+5+6 = 16.
const std::vector<double> kX3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};

TEST(ConvolutionTest, ChannelsLastLayoutB01fWith01io) {
  // Kernel [k0][k1][i][o]: (0,0) [1,1], (0,1) [2,1], (1,0) [3,1], (1,1) [4,1].
  // Result [b][0][1][f]: (j=0: f0 37, f1 12), (j=1: f0 47, f1 16).
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,2] parameter(1)
  ROOT r = f32[1,1,2,2] convolution(x, k), window={size=2x2 stride=2x1}, dim_labels=b01f_01io->b01f
})",
             {{{1, 3, 3, 1}, kX3x3}, {{2, 2, 1, 2}, {1, 1, 2, 1, 3, 1, 4, 1}}}, {37, 12, 47, 16});
}

TEST(ConvolutionTest, ChannelsFirstLayoutBf01WithOi01) {
  // The same convolution in NCHW / OIHW: kernel [o][i][k0][k1] = [1,2,3,4], [1,1,1,1];
  // result [b][f][0][1] = f0 [37, 47], f1 [12, 16].
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,1,3,3] parameter(0)
  k = f32[2,1,2,2] parameter(1)
  ROOT r = f32[1,2,1,2] convolution(x, k), window={size=2x2 stride=2x1}, dim_labels=bf01_oi01->bf01
})",
             {{{1, 1, 3, 3}, kX3x3}, {{2, 1, 2, 2}, {1, 2, 3, 4, 1, 1, 1, 1}}}, {37, 47, 12, 16});
}

TEST(ConvolutionTest, UnusualLabelOrdersAreHonoured) {
  // Input f0b [c][w][b]: c0 = [1,2,3], c1 = [10,20,30]. Kernel o0i [o][k][i]: k0 [1,1], k1 [2,0].
  // out[w] = x[c0,w] + x[c1,w] + 2 x[c0,w+1]: w0 1+10+4 = 15, w1 2+20+6 = 28; result 0fb.
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[2,3,1] parameter(0)
  k = f32[1,2,2] parameter(1)
  ROOT r = f32[2,1,1] convolution(x, k), window={size=2}, dim_labels=f0b_o0i->0fb
})",
             {{{2, 3, 1}, {1, 2, 3, 10, 20, 30}}, {{1, 2, 2}, {1, 1, 2, 0}}}, {15, 28});
}

TEST(ConvolutionTest, TwoDimRhsDilationWithPadding) {
  // x 3x3 as above padded by 1 on every side (p[a][b] = x[a-1][b-1], 0 outside), kernel
  // [[1,2],[3,4]] with taps 2 apart: 3x3 outputs,
  // out[i][j] = p[i][j] + 2 p[i][j+2] + 3 p[i+2][j] + 4 p[i+2][j+2]:
  //   (0,0) 4*5 = 20        (0,1) 3*4 + 4*6 = 36          (0,2) 3*5 = 15
  //   (1,0) 2*2 + 4*8 = 36  (1,1) 1 + 2*3 + 3*7 + 4*9 = 64 (1,2) 2 + 3*8 = 26
  //   (2,0) 2*5 = 10        (2,1) 4 + 2*6 = 16            (2,2) 5
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,1] parameter(1)
  ROOT r = f32[1,3,3,1] convolution(x, k), window={size=2x2 pad=1_1x1_1 rhs_dilate=2x2},
      dim_labels=b01f_01io->b01f
})",
             {{{1, 3, 3, 1}, kX3x3}, {{2, 2, 1, 1}, {1, 2, 3, 4}}},
             {20, 36, 15, 36, 64, 26, 10, 16, 5});
}

TEST(ConvolutionTest, FeatureGroupsConvolveEachGroupSeparately) {
  // x[w][c] (W=3, C=4): [1,2,3,4], [5,6,7,8], [9,10,11,12]; G = 2, so output feature 0 reads
  // channels {0,1} and feature 1 reads channels {2,3}. Kernel [k][i][o]:
  //   o0: k0 (i0 1, i1 0), k1 (i0 0, i1 1)  -> out0[w] = x[w][0] + x[w+1][1]: 1+6, 5+10
  //   o1: k0 (i0 1, i1 0), k1 (i0 0, i1 10) -> out1[w] = x[w][2] + 10 x[w+1][3]: 3+80, 7+120
  // (reading channels {0,1} for o1 would give 1+60 = 61).
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,3,4] parameter(0)
  k = f32[2,2,2] parameter(1)
  ROOT r = f32[1,2,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f,
      feature_group_count=2
})",
             {{{1, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
              {{2, 2, 2}, {1, 1, 0, 0, 0, 0, 1, 10}}},
             {7, 83, 15, 127});
}

TEST(ConvolutionTest, DepthwiseMultiplierTwoGivesTwoOutputsPerChannel) {
  // G = C = 2, four outputs: features 0,1 read channel 0, features 2,3 read channel 1.
  // x[w][c]: [1,10], [2,20], [3,30]. Kernel [k][0][o]: k0 [1,0,1,1], k1 [0,1,1,-1]:
  //   o0 = x[w][0], o1 = x[w+1][0], o2 = x[w][1] + x[w+1][1], o3 = x[w][1] - x[w+1][1]
  //   w0: 1, 2, 30, -10;  w1: 2, 3, 50, -10.
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,3,2] parameter(0)
  k = f32[2,1,4] parameter(1)
  ROOT r = f32[1,2,4] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f,
      feature_group_count=2
})",
             {{{1, 3, 2}, {1, 10, 2, 20, 3, 30}}, {{2, 1, 4}, {1, 0, 1, 1, 0, 1, 1, -1}}},
             {1, 2, 30, -10, 2, 3, 50, -10});
}

TEST(ConvolutionTest, BatchGroupsFeedContiguousBlocksOfOutputFeatures) {
  // N = 2, B = 2, 4 output features: block b of C_out/B = 2 features reads input batch b.
  // x batch0 [1,2,3], batch1 [10,20,30]; kernel [k][0][o]: k0 [1,0,1,0], k1 [0,1,0,1]:
  //   o0 = x0[w], o1 = x0[w+1], o2 = x1[w], o3 = x1[w+1]:  w0 [1,2,10,20], w1 [2,3,20,30].
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[2,3,1] parameter(0)
  k = f32[2,1,4] parameter(1)
  ROOT r = f32[1,2,4] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f,
      batch_group_count=2
})",
             {{{2, 3, 1}, {1, 2, 3, 10, 20, 30}}, {{2, 1, 4}, {1, 0, 1, 0, 0, 1, 0, 1}}},
             {1, 2, 10, 20, 2, 3, 20, 30});
  // N = 4, B = 2: output batch n of feature f reads input batch (f / (C_out/B)) * (N/B) + n.
  // x = [1],[2],[3],[4]; kernel [10, 100]: n0 [1*10, 3*100], n1 [2*10, 4*100].
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[4,1,1] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT r = f32[2,1,2] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f,
      batch_group_count=2
})",
             {{{4, 1, 1}, {1, 2, 3, 4}}, {{1, 1, 2}, {10, 100}}}, {10, 300, 20, 400});
}

TEST(ConvolutionTest, Bf16OperandsAccumulateInF32) {
  // 256 + 1 + 1 = 258 summed in f32 and rounded once (bf16 partial sums would stay at 256).
  EXPECT_EQ(
      RunAs(DType::kBF16, "bf16", Conv1D(3, 3, 1, "size=3"), Conv1DArgs({256, 1, 1}, {1, 1, 1})),
      (std::vector<double>{258}));
}

TEST(ConvolutionTest, EmptyFeatureDimGivesZerosAndEmptyBatchGivesEmptyResult) {
  // C_in = 0: every output is the empty sum 0 (two output features, two positions).
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[1,3,0] parameter(0)
  k = f32[2,0,2] parameter(1)
  ROOT r = f32[1,2,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
})",
             {{{1, 3, 0}, {}}, {{2, 0, 2}, {}}}, {0, 0, 0, 0});
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[0,3,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT r = f32[0,2,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
})",
             {{{0, 3, 1}, {}}, {{2, 1, 1}, {1, 10}}}, {});
}

TEST(ConvolutionTest, NoSpatialDimsIsAMatrixProduct) {
  // bf_io->bf: out[b][o] = sum_i x[b][i] k[i][o], the matrix product
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] (see DotTest above).
  ExpectConv(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  k = f32[3,2] parameter(1)
  ROOT r = f32[2,2] convolution(x, k), dim_labels=bf_io->bf
})",
             {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {7, 8, 9, 10, 11, 12}}}, {58, 64, 139, 154});
}

TEST(ConvolutionTest, MismatchedShapesAndAttributesAreErrorsNamingTheConvolution) {
  // The kernel's input feature dim (3) is not C_in / feature_group_count = 2 / 1.
  ExpectError(R"(HloModule m
ENTRY e {
  x = f32[1,3,2] parameter(0)
  k = f32[2,3,1] parameter(1)
  ROOT r = f32[1,2,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
})",
              {{{1, 3, 2}, {1, 2, 3, 4, 5, 6}}, {{2, 3, 1}, {1, 2, 3, 4, 5, 6}}},
              "kernel input features");
  // 3 feature groups do not divide 4 channels.
  ExpectError(R"(HloModule m
ENTRY e {
  x = f32[1,1,4] parameter(0)
  k = f32[1,1,3] parameter(1)
  ROOT r = f32[1,1,3] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f,
      feature_group_count=3
})",
              {{{1, 1, 4}, {1, 2, 3, 4}}, {{1, 1, 3}, {1, 2, 3}}}, "feature_group_count 3");
  const std::vector<Array> args = Conv1DArgs({1, 2, 3, 4, 5}, {1, 10});
  // Window size 3 for a kernel of 2 taps.
  ExpectError(Conv1D(5, 2, 4, "size=3"), args, "window size 3");
  // 5 - 2 + 1 = 4 outputs, not 3.
  ExpectError(Conv1D(5, 2, 3, "size=2"), args, "the window gives 4");
  // Two window dims for one spatial dim.
  ExpectError(Conv1D(5, 2, 4, "size=2x1"), args, "(of 2 spatial dims)");
  // 2 batch groups cannot split a batch of 1.
  ExpectError(R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = f32[2,1,2] parameter(1)
  ROOT r = f32[1,4,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f,
      batch_group_count=2
})",
              {args[0], {{2, 1, 2}, {1, 2, 3, 4}}}, "batch_group_count 2");
}

}  // namespace
}  // namespace alpa::interp::testing
