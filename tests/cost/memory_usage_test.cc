#include "cost/memory_usage.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace alpa::cost {
namespace {

using testing::ParseVerified;

TEST(MemoryUsageTest, ChainFreesEachValueAfterItsLastUse) {
  // Each value is f32[256] = 1 KiB. Order: p, a, b, c, d. The parameter lives throughout; at
  // each step the input and the output of a negate are live: 1024 + 2 * 1024 = 3072, reached
  // first at b (at a only p and a are live: 2048).
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] negate(p)
  b = f32[256] negate(a)
  c = f32[256] negate(b)
  ROOT d = f32[256] negate(c)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.parameter_bytes, 1024);
  EXPECT_EQ(usage.peak_bytes, 3072);
  ASSERT_NE(usage.peak_instruction, nullptr);
  EXPECT_EQ(usage.peak_instruction->name(), "b");
}

TEST(MemoryUsageTest, ValueUsedTwiceStaysLive) {
  // f32[4] = 16 bytes. Order: p0, p1, a, b, c. Parameters 32. a: 48. b: 64 (a and b live),
  // then a is freed. c: 48 + 16 = 64 (b, c). Peak 64, first at b.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1)
  b = f32[4] multiply(a, a)
  ROOT c = f32[4] add(b, p0)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.parameter_bytes, 32);
  EXPECT_EQ(usage.peak_bytes, 64);
  EXPECT_EQ(usage.peak_instruction->name(), "b");
}

TEST(MemoryUsageTest, AliasesAllocateNothingAndKeepTheirOperandAlive) {
  // f32[100] = 400 bytes. Order: p, y, x, t, g, r. x is read directly only by the tuple t, but
  // through t and g it is read by r, so it stays live until r: 400 (p) + 400 (y) + 400 (x) +
  // 400 (r) = 1600 at r. The tuple and get-tuple-element add nothing.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[100] parameter(0)
  y = f32[100] negate(p)
  x = f32[100] exponential(p)
  t = (f32[100]) tuple(x)
  g = f32[100] get-tuple-element(t), index=0
  ROOT r = f32[100] add(y, g)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.peak_bytes, 1600);
  EXPECT_EQ(usage.peak_instruction->name(), "r");
}

TEST(MemoryUsageTest, UnusedConstantCountsAtItsStepOnly) {
  // Order: p (40 bytes), n (root, 40, lives to the end), then the unreached constant c
  // (f32[256] = 1024) which is allocated and freed at its own step: 40 + 40 + 1024 = 1104.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[10] parameter(0)
  c = f32[256] constant({...})
  ROOT n = f32[10] negate(p)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.peak_bytes, 1104);
  EXPECT_EQ(usage.peak_instruction->name(), "c");
}

TEST(MemoryUsageTest, ParametersOnlyPeakIsTheirSize) {
  // A root tuple of the parameters allocates nothing: the peak is the 8 + 24 parameter bytes.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  a = f32[2] parameter(0)
  b = s64[3] parameter(1)
  ROOT t = (f32[2], s64[3]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.parameter_bytes, 32);
  EXPECT_EQ(usage.peak_bytes, 32);
}

}  // namespace
}  // namespace alpa::cost
