#include "cost/liveness.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace alpa::cost {
namespace {

using testing::ParseVerified;

struct Expected {
  std::string name;
  int64_t start;
  int64_t end;
  int64_t bytes;
};

// The schedule's buffers, in order, as {name, [start, end), bytes}.
void ExpectBuffers(const Liveness& liveness, const std::vector<Expected>& expected) {
  ASSERT_EQ(liveness.buffers.size(), expected.size());
  for (size_t t = 0; t < expected.size(); ++t) {
    const BufferInterval& buffer = liveness.buffers[t];
    EXPECT_EQ(buffer.instruction->name(), expected[t].name) << "step " << t;
    EXPECT_EQ(buffer.start, expected[t].start) << expected[t].name;
    EXPECT_EQ(buffer.end, expected[t].end) << expected[t].name;
    EXPECT_EQ(buffer.bytes, expected[t].bytes) << expected[t].name;
  }
}

// The programs below compute in s32 wherever a chain of f32 arithmetic would run as one loop
// (ir/loop_fusion.h; LoopFusedValuesAreAliases shows that rule).
TEST(LivenessTest, ChainIntervalsAreHalfOpenFromDefinitionToLastUse) {
  // s32[256] = 1 KiB each. Each negate's input lives [def, reader + 1); the root to the end (5).
  // usage: p; p a; p a b; p b c; p c d = 1, 2, 3, 3, 3 KiB: peak first at step 2 (b).
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
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(liveness, {{"p", 0, 5, 1024},
                           {"a", 1, 3, 1024},
                           {"b", 2, 4, 1024},
                           {"c", 3, 5, 1024},
                           {"d", 4, 5, 1024}});
  EXPECT_EQ(liveness.usage, (std::vector<int64_t>{1024, 2048, 3072, 3072, 3072}));
  EXPECT_EQ(liveness.peak_bytes, 3072);
  EXPECT_EQ(liveness.peak_step, 2);
  EXPECT_EQ(liveness.parameter_bytes, 1024);
  EXPECT_EQ(liveness.StepOf(module->entry()->GetInstruction("c")), 3);
  EXPECT_EQ(liveness.BufferOf(module->entry()->GetInstruction("c")).end, 5);
}

// The same chain in f32 runs as one loop rooted at d: a, b and c are computed inside it and
// allocate nothing, and p, the loop's input, lives until d ran (a parameter lives throughout
// anyway). usage: p; p; p; p; p d.
TEST(LivenessTest, LoopFusedValuesAreAliases) {
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
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(
      liveness,
      {{"p", 0, 5, 1024}, {"a", 1, 5, 0}, {"b", 2, 5, 0}, {"c", 3, 5, 0}, {"d", 4, 5, 1024}});
  EXPECT_TRUE(liveness.buffers[2].alias);
  EXPECT_EQ(liveness.usage, (std::vector<int64_t>{1024, 1024, 1024, 1024, 2048}));
  EXPECT_EQ(liveness.peak_step, 4);
}

// A broadcast the runtime reads in place (ir/broadcast_folding.h) is an alias of its operand:
// 0 bytes, and the operand lives until the broadcast's last reader.
TEST(LivenessTest, BroadcastsReadInPlaceAreAliases) {
  // Post order p, v, w, b, x, r: v (256 bytes) is read by b only, b by x and r (step 5). x is
  // computed inside r's loop, which reads p and b: no bytes either.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4,64] parameter(0)
  v = f32[64] parameter(1)
  w = f32[64] negate(v)
  b = f32[4,64] broadcast(w), dimensions={1}
  x = f32[4,64] multiply(p, b)
  ROOT r = f32[4,64] add(x, b)
})");
  ASSERT_NE(module, nullptr);
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(liveness, {{"p", 0, 6, 1024},
                           {"v", 0, 6, 256},
                           {"w", 2, 6, 256},
                           {"b", 3, 6, 0},
                           {"x", 4, 6, 0},
                           {"r", 5, 6, 1024}});
  EXPECT_TRUE(liveness.buffers[3].alias);
}

TEST(LivenessTest, AliasesAllocateNothingAndExtendTheirOperands) {
  // f32[100] = 400 bytes. Post order p, y, x, t, g, r. x is read by the tuple t only, but t is
  // read by g and g by r (step 5), so x lives [2, 6). The tuple and get-tuple-element are 0
  // bytes; their own intervals follow their readers. y, read by r alone, runs inside r's loop:
  // 0 bytes as well.
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
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(liveness, {{"p", 0, 6, 400},
                           {"y", 1, 6, 0},
                           {"x", 2, 6, 400},
                           {"t", 3, 6, 0},
                           {"g", 4, 6, 0},
                           {"r", 5, 6, 400}});
  EXPECT_EQ(liveness.peak_bytes, 1200);
  EXPECT_EQ(liveness.peak_step, 5);
}

TEST(LivenessTest, BitcastAndOptBarrierAlias) {
  // a (16 bytes) is read only through the bitcast and the barrier, which n reads at step 4: a
  // lives [1, 5). usage: 16, 32, 32, 32, 48 (p, a, n).
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  c = f32[2,2] bitcast(a)
  o = f32[2,2] opt-barrier(c)
  ROOT n = f32[2,2] negate(o)
})");
  ASSERT_NE(module, nullptr);
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(
      liveness,
      {{"p", 0, 5, 16}, {"a", 1, 5, 16}, {"c", 2, 5, 0}, {"o", 3, 5, 0}, {"n", 4, 5, 16}});
  EXPECT_EQ(liveness.usage, (std::vector<int64_t>{16, 32, 32, 32, 48}));
}

TEST(LivenessTest, DeadValueLivesOneStepAndARootTupleKeepsItsElements) {
  // Text order: p, a, b, d, t (root). The root tuple keeps a and b to the end (5); d (f32[64] =
  // 256 bytes), which nobody reads, lives [3, 4) only.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(p)
  d = f32[64] constant({...})
  ROOT t = (f32[4], f32[4]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  const Liveness liveness = ComputeLiveness(*module->entry());
  ExpectBuffers(
      liveness,
      {{"p", 0, 5, 16}, {"a", 1, 5, 16}, {"b", 2, 5, 16}, {"d", 3, 4, 256}, {"t", 4, 5, 0}});
  EXPECT_EQ(liveness.peak_bytes, 16 * 3 + 256);
  EXPECT_EQ(liveness.peak_step, 3);
}

TEST(LivenessTest, GivenOrderAndBytesFunction) {
  // Two independent values a and s, both read by r, in the given order p, s, a, r; bytes are
  // halved as for a 2-way shard (s32[100] = 400 bytes, 200 per device).
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = s32[100] parameter(0)
  a = s32[100] negate(p)
  s = s32[100] abs(p)
  ROOT r = s32[100] add(a, s)
})");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  auto half = [](const ir::Instruction& instruction) { return instruction.shape().ByteSize() / 2; };
  const std::vector<const ir::Instruction*> order = {
      entry.GetInstruction("p"), entry.GetInstruction("s"), entry.GetInstruction("a"),
      entry.GetInstruction("r")};
  const Liveness liveness = ComputeLiveness(entry, order, half);
  ExpectBuffers(liveness, {{"p", 0, 4, 200}, {"s", 1, 4, 200}, {"a", 2, 4, 200}, {"r", 3, 4, 200}});
  EXPECT_EQ(liveness.usage, (std::vector<int64_t>{200, 400, 600, 800}));
  EXPECT_EQ(liveness.parameter_bytes, 200);
}

TEST(LivenessTest, ParametersLiveFromTheFirstStep) {
  // The second parameter comes late in the post order but is counted from step 0: 8 + 24 bytes.
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  a = f32[2] parameter(0)
  b = s64[3] parameter(1)
  n = f32[2] negate(a)
  ROOT t = (f32[2], s64[3]) tuple(n, b)
})");
  ASSERT_NE(module, nullptr);
  const Liveness liveness = ComputeLiveness(*module->entry());
  const BufferInterval& b = liveness.BufferOf(module->entry()->GetInstruction("b"));
  EXPECT_EQ(b.start, 0);
  EXPECT_EQ(b.end, liveness.steps());
  EXPECT_EQ(liveness.usage.front(), 32);
  EXPECT_EQ(liveness.peak_bytes, 40);
}

// A donated parameter (a weight the step updates) takes its next value in place once nothing
// reads it later: w' = w - g allocates nothing, so the update adds only g (an output too, so that
// it is not computed inside w's update loop). Where w is still read after w' is computed
// (s = w * w' below), w' needs a buffer of its own.
TEST(LivenessTest, ADonatedParametersNextValueIsWrittenOverIt) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  w = f32[256] parameter(0)
  x = f32[256] parameter(1)
  g = f32[256] multiply(x, x)
  next = f32[256] subtract(w, g)
  ROOT t = (f32[256], f32[256]) tuple(next, g)
})");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  const ir::Instruction* w = entry.GetInstruction("w");
  const ir::Instruction* next = entry.GetInstruction("next");
  const Liveness kept = ComputeLiveness(entry);
  EXPECT_EQ(kept.peak_bytes, 4 * 1024);  // w, x, g, next
  const Liveness donated = ComputeLiveness(entry, FullShapeBytes, NoFusion(), {{w, next}});
  EXPECT_TRUE(donated.BufferOf(next).in_place);
  EXPECT_EQ(donated.BufferOf(next).bytes, 0);
  EXPECT_EQ(donated.peak_bytes, 3 * 1024);  // w (holding next), x, g

  auto late = ParseVerified(R"(
HloModule m
ENTRY main {
  w = f32[256] parameter(0)
  x = f32[256] parameter(1)
  g = f32[256] multiply(x, x)
  next = f32[256] subtract(w, g)
  s = f32[256] multiply(w, next)
  ROOT t = (f32[256], f32[256]) tuple(next, s)
})");
  ASSERT_NE(late, nullptr);
  const Liveness read_after = ComputeLiveness(
      *late->entry(), FullShapeBytes, NoFusion(),
      {{late->entry()->GetInstruction("w"), late->entry()->GetInstruction("next")}});
  EXPECT_FALSE(read_after.BufferOf(late->entry()->GetInstruction("next")).in_place);
  EXPECT_EQ(read_after.BufferOf(late->entry()->GetInstruction("next")).bytes, 1024);
}

// How ZeRO-2 lowers an update on a device: the update u is computed on this device's quarter of
// the optimizer state, all-gathered, and subtracted from the replicated weight. u is read by the
// all-gather, so it is written to memory (512 B, not computed inside next's loop) and freed once
// copied; the gathered copy (1 KiB) lives while next runs. usage at next: w, m, the copy, next.
TEST(LivenessTest, AReshardedOperandIsWrittenOutAndItsCopyLivesWhileItsReaderRuns) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  w = f32[256] parameter(0)
  m = f32[256] parameter(1)
  u = f32[256] multiply(m, m)
  ROOT next = f32[256] subtract(w, u)
})");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  const ir::Instruction* u = entry.GetInstruction("u");
  const ir::Instruction* next = entry.GetInstruction("next");
  auto bytes = [&](const ir::Instruction& instruction) {
    return instruction.name() == "m" || instruction.name() == "u" ? 256 : 1024;
  };
  EXPECT_EQ(ComputeLiveness(entry, bytes).usage, (std::vector<int64_t>{1280, 1280, 1280, 2304}));
  Lowering lowering;
  lowering[next].resharded_operand_bytes = 1024;
  lowering[next].resharded_operands = {u};
  const Liveness lowered = ComputeLiveness(entry, bytes, NoFusion(), {}, lowering);
  EXPECT_FALSE(lowered.BufferOf(u).alias);
  EXPECT_EQ(lowered.BufferOf(u).bytes, 256);
  // Step 3's moments: resharding w m u copy = 2560; kernel w m copy next = 3328.
  EXPECT_EQ(lowered.usage, (std::vector<int64_t>{1280, 1280, 1536, 3328}));
  EXPECT_EQ(lowered.peak_step, 3);
  // The peak's contents: w, m and next held, u freed once copied, the copy beside them.
  EXPECT_EQ(lowered.held_at_peak, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(lowered.peak_lowering_bytes, 1024);
}

// A dot split along its contracting dimension on 4 devices writes the whole local product (its
// partial sums, 1 KiB) and a reduce-scatter leaves each device its quarter (256 B). The
// collective runs after the kernel's dying operand a is freed, and holds the partial sums
// beside the result: x, y, partial, d = 1792 B, above the kernel's x, y, a, partial = 1600 B.
TEST(LivenessTest, PartialSumsLiveUntilTheirCollectiveWroteTheResult) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  x = s32[64] parameter(0)
  y = s32[16,4] parameter(1)
  a = s32[16] slice(x), slice={[0:16]}
  ROOT d = s32[4] dot(a, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  auto bytes = [&](const ir::Instruction& instruction) -> int64_t {
    return instruction.name() == "a" ? 64 : 256;
  };
  EXPECT_EQ(ComputeLiveness(entry, bytes).peak_bytes, 256 + 256 + 64 + 256);
  Lowering lowering;
  lowering[entry.GetInstruction("d")].unreduced_result_bytes = 1024;
  const Liveness lowered = ComputeLiveness(entry, bytes, NoFusion(), {}, lowering);
  EXPECT_EQ(lowered.usage.back(), 256 + 256 + 1024 + 256);
  EXPECT_EQ(lowered.peak_bytes, 1792);
  EXPECT_EQ(lowered.held_at_peak, (std::vector<bool>{true, true, false, true}));  // x y d
  EXPECT_EQ(lowered.peak_lowering_bytes, 1024);                                   // the partials
}

}  // namespace
}  // namespace alpa::cost
