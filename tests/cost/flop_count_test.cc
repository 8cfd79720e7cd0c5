#include "cost/flop_count.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace alpa::cost {
namespace {

using ir::Opcode;
using testing::ParseVerified;

Result<FlopCount> CountEntry(std::string_view text) {
  auto module = ParseVerified(text);
  if (module == nullptr) return InvalidArgument("test module did not parse");
  return CountFlops(*module->entry());
}

TEST(FlopCountTest, DotIsTwiceResultTimesContraction) {
  // dot: 2 * (8*32) * 16 = 8192; add: 8*32 = 256.
  auto count = CountEntry(R"(
HloModule m
ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,32] parameter(1)
  d = f32[8,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[8,32] add(d, d)
})");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 8192 + 256);
  EXPECT_EQ(count->by_opcode.at(Opcode::kDot), 8192);
  EXPECT_EQ(count->by_opcode.at(Opcode::kAdd), 256);
  EXPECT_EQ(count->by_opcode.size(), 2u);  // parameters contribute nothing
  EXPECT_TRUE(count->unknown_trip_count_loops.empty());
}

TEST(FlopCountTest, BatchedDotCountsBatchInResult) {
  // result 4x8x2 = 64 elements, contraction 3: 2 * 64 * 3 = 384.
  auto count = CountEntry(R"(
HloModule m
ENTRY main {
  a = f32[4,8,3] parameter(0)
  b = f32[4,3,2] parameter(1)
  ROOT d = f32[4,8,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 384);
}

TEST(FlopCountTest, ConvolutionUsesFeaturesPerGroupAndKernelWindow) {
  // Output 1x6x3x3 = 54 elements, 4 input features, 3x3 window: 2 * 54 * 4 * 9 = 3888.
  auto dense = CountEntry(R"(
HloModule m
ENTRY main {
  x = f32[1,4,5,5] parameter(0)
  k = f32[6,4,3,3] parameter(1)
  ROOT y = f32[1,6,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  EXPECT_EQ(dense->flops, 3888);
  // Two feature groups: each output sees 4 / 2 input features: 2 * 54 * 2 * 9 = 1944.
  auto grouped = CountEntry(R"(
HloModule m
ENTRY main {
  x = f32[1,4,5,5] parameter(0)
  k = f32[6,2,3,3] parameter(1)
  ROOT y = f32[1,6,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})");
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  EXPECT_EQ(grouped->flops, 1944);
}

TEST(FlopCountTest, ReductionsCountApplicationsNotTheReducer) {
  // reduce: one application per input element, 8*32 = 256. reduce-window: 2x2 outputs of 2x2
  // windows, 4 * 4 = 16. The add inside %sum is not counted again.
  auto count = CountEntry(R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[8,32] parameter(0)
  w = f32[4,4] parameter(1)
  zero = f32[] constant(0)
  r = f32[8] reduce(a, zero), dimensions={1}, to_apply=sum
  rw = f32[2,2] reduce-window(w, zero), window={size=2x2 stride=2x2}, to_apply=sum
  ROOT t = (f32[8], f32[2,2]) tuple(r, rw)
})");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->by_opcode.at(Opcode::kReduce), 256);
  EXPECT_EQ(count->by_opcode.at(Opcode::kReduceWindow), 16);
  EXPECT_EQ(count->flops, 272);
  EXPECT_EQ(count->by_opcode.count(Opcode::kAdd), 0u);
}

TEST(FlopCountTest, FusionIsCountedThroughItsBodyByOpcode) {
  // Inside the fusion: multiply 4 + exponential 4 (a transcendental counts 1 per element).
  auto count = CountEntry(R"(
HloModule m
fused {
  p = f32[4] parameter(0)
  m = f32[4] multiply(p, p)
  ROOT e = f32[4] exponential(m)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 8);
  EXPECT_EQ(count->by_opcode.at(Opcode::kMultiply), 4);
  EXPECT_EQ(count->by_opcode.at(Opcode::kExp), 4);
  EXPECT_EQ(count->by_opcode.count(Opcode::kFusion), 0u);
}

constexpr std::string_view kLoopModule = R"(
HloModule m
cond {
  cp = (s32[], f32[10]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
body {
  bp = (s32[], f32[10]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[10] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(bi, one)
  y = f32[10] add(bx, bx)
  ROOT t = (s32[], f32[10]) tuple(next, y)
}
ENTRY main {
  x = f32[10] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[10]) tuple(zero, x)
  ROOT w = (s32[], f32[10]) while(init), condition=cond, body=body%s
})";

std::string LoopModule(std::string_view config) {
  std::string text(kLoopModule);
  return text.replace(text.find("%s"), 2, config);
}

TEST(FlopCountTest, WhileUsesKnownTripCount) {
  // body: 1 (counter) + 10 (vector add) = 11; condition: 1 compare. n = 5:
  // 5 * 11 + (5 + 1) * 1 = 61.
  auto count = CountEntry(LoopModule(R"(, backend_config={"known_trip_count":{"n":"5"}})"));
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 61);
  EXPECT_EQ(count->by_opcode.at(Opcode::kAdd), 55);
  EXPECT_EQ(count->by_opcode.at(Opcode::kCompare), 6);
  EXPECT_TRUE(count->unknown_trip_count_loops.empty());
}

TEST(FlopCountTest, WhileWithoutTripCountCountsOnceAndSaysSo) {
  // 1 * 11 + 2 * 1 = 13.
  auto count = CountEntry(LoopModule(""));
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 13);
  EXPECT_EQ(count->unknown_trip_count_loops, std::vector<std::string>{"w"});
}

TEST(FlopCountTest, MalformedTripCountIsAnErrorNamingTheLoop) {
  auto count = CountEntry(LoopModule(R"(, backend_config={"known_trip_count":{"n":"five"}})"));
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("%w"), std::string::npos) << count.status().message();
  EXPECT_NE(count.status().message().find("known_trip_count"), std::string::npos);
}

TEST(FlopCountTest, ConditionalTakesTheMostExpensiveBranch) {
  // Branch 0: 3 flops (one add of f32[3]); branch 1: 6 (add and multiply). Max: 6.
  auto count = CountEntry(R"(
HloModule m
cheap {
  p0 = f32[3] parameter(0)
  ROOT a0 = f32[3] add(p0, p0)
}
costly {
  p1 = f32[3] parameter(0)
  a1 = f32[3] add(p1, p1)
  ROOT m1 = f32[3] multiply(a1, a1)
}
ENTRY main {
  b = s32[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(b, x, x), branch_computations={cheap, costly}
})");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_EQ(count->flops, 6);
}

TEST(KnownTripCountTest, ReadsRawQuotedAndNumericForms) {
  ir::Instruction loop("w", Opcode::kWhile, ir::Shape());
  auto read = [&](std::string config) {
    loop.mutable_attributes().backend_config = std::move(config);
    return KnownTripCount(loop);
  };
  EXPECT_EQ(*read(R"({"known_trip_count":{"n":"12"}})"), 12);
  EXPECT_EQ(*read(R"("{\"known_trip_count\":{\"n\":\"7\"}}")"), 7);
  EXPECT_EQ(*read(R"({"known_trip_count":{"n":3}})"), 3);
  EXPECT_EQ(*read(""), std::nullopt);
  EXPECT_EQ(*read("not json"), std::nullopt);
  EXPECT_EQ(*read(R"({"other":1})"), std::nullopt);
  EXPECT_FALSE(read(R"({"known_trip_count":{"n":"-1"}})").ok());
  EXPECT_FALSE(read(R"({"known_trip_count":{}})").ok());
}

}  // namespace
}  // namespace alpa::cost
