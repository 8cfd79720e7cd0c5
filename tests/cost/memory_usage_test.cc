#include "cost/memory_usage.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace alpa::cost {
namespace {

using testing::ParseVerified;

// NaivePeakMemory is ComputeLiveness over the post order (liveness_test.cc covers aliases, loops,
// dead values and parameters); these check the summary it reads off, on s32 programs, which
// no loop fuses (ir/loop_fusion.h).

TEST(MemoryUsageTest, ChainFreesEachValueAfterItsLastUse) {
  // Each value is s32[256] = 1 KiB. Order: p, a, b, c, d. The parameter lives throughout; at
  // each step the input and the output of a negate are live: 1024 + 2 * 1024 = 3072, reached
  // first at b (at a only p and a are live: 2048).
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = s32[256] parameter(0)
  a = s32[256] negate(p)
  b = s32[256] negate(a)
  c = s32[256] negate(b)
  ROOT d = s32[256] negate(c)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.parameter_bytes, 1024);
  EXPECT_EQ(usage.peak_bytes, 3072);
  ASSERT_NE(usage.peak_instruction, nullptr);
  EXPECT_EQ(usage.peak_instruction->name(), "b");
}

TEST(MemoryUsageTest, ValueUsedTwiceStaysLive) {
  // s32[4] = 16 bytes. Order: p0, p1, a, b, c. Parameters 32. a: 48. b: 64 (a and b live),
  // then a is freed. c: 48 + 16 = 64 (b, c). Peak 64, first at b.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p0 = s32[4] parameter(0)
  p1 = s32[4] parameter(1)
  a = s32[4] add(p0, p1)
  b = s32[4] multiply(a, a)
  ROOT c = s32[4] add(b, p0)
})");
  ASSERT_NE(module, nullptr);
  MemoryUsage usage = NaivePeakMemory(*module->entry());
  EXPECT_EQ(usage.parameter_bytes, 32);
  EXPECT_EQ(usage.peak_bytes, 64);
  EXPECT_EQ(usage.peak_instruction->name(), "b");
}

}  // namespace
}  // namespace alpa::cost
