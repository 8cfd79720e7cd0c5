#include "cost/kernel_fusion.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cluster/device.h"
#include "cost/compute_cost.h"
#include "cost/liveness.h"
#include "test_util.h"

namespace alpa::cost {
namespace {

using testing::ParseVerified;

std::set<std::string> Names(const FusedValues& fused) {
  std::set<std::string> names;
  for (const ir::Instruction* instruction : fused) names.insert(instruction->name());
  return names;
}

// An MLP block's forward: dot, bias, ReLU, dot. f32[64,256] = 64 KiB.
constexpr const char* kMlpBlock = R"(
HloModule m
ENTRY main {
  x = f32[64,128] parameter(0)
  w1 = f32[128,256] parameter(1)
  b1 = f32[256] parameter(2)
  w2 = f32[256,128] parameter(3)
  h = f32[64,256] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias = f32[64,256] broadcast(b1), dimensions={1}
  biased = f32[64,256] add(h, bias)
  zero = f32[] constant(0)
  zeros = f32[64,256] broadcast(zero), dimensions={}
  relu = f32[64,256] maximum(biased, zeros)
  ROOT y = f32[64,128] dot(relu, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(KernelFusionTest, ElementwiseChainsFuseIntoTheirLastReader) {
  auto module = ParseVerified(kMlpBlock);
  ASSERT_NE(module, nullptr);
  const FusedValues fused = FuseIntoReaders(*module->entry());
  // relu is read by a dot, which is a library call: it is materialized and roots the kernel.
  EXPECT_EQ(Names(fused), (std::set<std::string>{"bias", "biased", "zeros"}));
  // The kernel of relu reads h (64 KiB), b1 (1 KiB) and the scalar zero, and writes 64 KiB.
  const ir::Instruction* relu = module->entry()->GetInstruction("relu");
  EXPECT_EQ(KernelBytes(*relu, fused), 65536 + 65536 + 1024 + 4);
  // Without fusion the same instruction reads its two operands whole.
  EXPECT_EQ(KernelBytes(*relu, {}), 3 * 65536);
}

TEST(KernelFusionTest, ExpensiveValuesWithSeveralReadersAreMaterialized) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  p = f32[1024] parameter(0)
  q = f64[1024] parameter(1)
  l = f32[1024] log(p)
  e = f32[1024] exponential(p)
  d = f64[1024] exponential(q)
  n = f32[1024] negate(p)
  a = f32[1024] add(l, e)
  b = f32[1024] multiply(l, e)
  dc = f32[1024] convert(d)
  c = f32[1024] add(dc, n)
  ds = f64[1024] sqrt(d)
  dsc = f32[1024] convert(ds)
  s = f32[1024] subtract(n, dsc)
  ROOT t = (f32[1024], f32[1024], f32[1024], f32[1024]) tuple(a, b, c, s)
})");
  ASSERT_NE(module, nullptr);
  // The negate and the f32 exponential are recomputed in both readers' kernels (exp is cheap on
  // a GPU in f32); the log and the f64 exponential are not. a, b, c and s are read by the root
  // tuple, which hosts nothing.
  EXPECT_EQ(Names(FuseIntoReaders(*module->entry())),
            (std::set<std::string>{"e", "n", "dc", "ds", "dsc"}));
}

// A transpose read by a dot becomes the library call's operand layout; a convert does not.
TEST(KernelFusionTest, DotsAbsorbTransposesButNotConverts) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  x = f32[64,128] parameter(0)
  w = f32[256,128] parameter(1)
  v = f32[128,256] parameter(2)
  wt = f32[128,256] transpose(w), dimensions={1,0}
  y = f32[64,256] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  xh = f16[64,128] convert(x)
  vh = f16[128,256] convert(v)
  z = f16[64,256] dot(xh, vh), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,256], f16[64,256]) tuple(y, z)
})");
  ASSERT_NE(module, nullptr);
  const FusedValues fused = FuseIntoReaders(*module->entry());
  EXPECT_EQ(Names(fused), (std::set<std::string>{"wt"}));
  // The dot reads w in place of its transpose: 32 + 128 KiB in, 64 KiB out.
  const ir::Instruction* y = module->entry()->GetInstruction("y");
  EXPECT_EQ(KernelBytes(*y, fused), 32768 + 131072 + 65536);
}

TEST(KernelFusionTest, ASliceReadsOnlyWhatItKeeps) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY main {
  qkv = f32[64,768] parameter(0)
  q = f32[64,256] slice(qkv), slice={[0:64], [0:256]}
  k = f32[64,256] slice(qkv), slice={[0:64], [256:512]}
  ROOT s = f32[64,256] add(q, k)
})");
  ASSERT_NE(module, nullptr);
  const FusedValues fused = FuseIntoReaders(*module->entry());
  EXPECT_EQ(Names(fused), (std::set<std::string>{"q", "k"}));
  // The slices read their 64 KiB each of qkv's 192 KiB; the sum writes 64 KiB.
  EXPECT_EQ(KernelBytes(*module->entry()->root(), fused), 65536 + 2 * 65536);
}

TEST(KernelFusionTest, FusedValuesAllocateNothingAndKeepTheirOperandsAlive) {
  auto module = ParseVerified(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[256] parameter(0)
  e = f32[256] exponential(p)
  n = f32[256] negate(e)
  c = f32[256] cosine(p)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(n, zero), dimensions={0}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  const FusedValues fused = FuseIntoReaders(entry);
  EXPECT_EQ(Names(fused), (std::set<std::string>{"e", "n"}));
  const Liveness liveness = ComputeLiveness(entry, FullShapeBytes, fused);
  const BufferInterval& n = liveness.BufferOf(entry.GetInstruction("n"));
  EXPECT_TRUE(n.alias);
  EXPECT_EQ(n.bytes, 0);
  // The reduce's kernel computes e and n from p: nothing between p and the reduce is allocated.
  EXPECT_EQ(liveness.BufferOf(entry.GetInstruction("e")).bytes, 0);
  EXPECT_EQ(liveness.BufferOf(entry.GetInstruction("c")).bytes, 1024);  // nobody reads it
  // Without fusion, e and n are buffers of their own.
  EXPECT_EQ(ComputeLiveness(entry).BufferOf(entry.GetInstruction("n")).bytes, 1024);
}

TEST(KernelFusionTest, DevicesThatDoNotFuseArePricedAsTheRuntimesLoopsRun) {
  auto module = ParseVerified(kMlpBlock);
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  DeviceThroughput device = ThroughputOf(cluster::V100Sxm2(16));
  ASSERT_TRUE(device.fuses_kernels);
  Result<ComputationCost> fused = EstimateComputation(entry, device);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  device.fuses_kernels = false;
  Result<ComputationCost> loops = EstimateComputation(entry, device);
  ASSERT_TRUE(loops.ok()) << loops.status().ToString();
  // Kernels: h (32 + 128 KiB in, 64 out), relu (as above), y (64 + 128 in, 32 out). The
  // runtime's loops keep what XLA keeps here: relu's loop computes biased and reads both
  // broadcasts in place.
  const int64_t kernels =
      (32 + 128 + 64) * 1024 + (64 + 64 + 1) * 1024 + 4 + (64 + 128 + 32) * 1024;
  EXPECT_EQ(fused->bytes, kernels);
  EXPECT_EQ(loops->bytes, kernels);
  EXPECT_EQ(FusionFor(device, entry),
            (FusedValues{entry.GetInstruction("bias"), entry.GetInstruction("biased"),
                         entry.GetInstruction("zeros")}));
  EXPECT_EQ(fused->flops, loops->flops);
  EXPECT_FALSE(ThroughputOf(cluster::CpuCoreEstimate(1 << 30)).fuses_kernels);
}

}  // namespace
}  // namespace alpa::cost
