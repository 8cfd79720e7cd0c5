#include "cost/compute_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/layer_boundary.h"

namespace alpa::cost {
namespace {

using ir::DType;
using ir::Instruction;
using ::testing::HasSubstr;

// Round figures: 1 TFLOP/s in f32, 4 TFLOP/s in f16, 100 GB/s; efficiencies 1 unless a test
// says otherwise, so that the numbers below are worked by hand.
const DeviceThroughput kDevice{{{DType::kF32, 1e12}, {DType::kF16, 4e12}}, 1e11};
const Efficiency kExact{.matmul = 1, .other_compute = 1, .memory = 1};

struct Built {
  std::unique_ptr<ir::Module> module;
  Instruction* dot;
  Instruction* add;
};

// y = x w + x w, x and w [n, n] of `dtype`.
Built DotAndAdd(int64_t n, DType dtype) {
  ir::ModuleBuilder mb("m");
  ir::ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, ir::Shape::Array(dtype, {n, n}), "x");
  Instruction* w = b.Parameter(1, ir::Shape::Array(dtype, {n, n}), "w");
  Instruction* dot = b.MatMul(x, w);
  Instruction* add = b.Add(dot, ir::EmitLayerBoundary(b, dot, {.layer = 0}));
  Result<ir::Computation*> main = b.Build(add);
  EXPECT_TRUE(main.ok()) << main.status().ToString();
  return {std::move(mb.Build(*main)).value(), dot, add};
}

TEST(ComputeCostTest, LargeMatmulIsComputeBound) {
  // 1024^3 matmul in f32: 2 * 1024^3 = 2.147e9 FLOP -> 2.147 ms at 1 TFLOP/s; it reads and
  // writes 3 * 4 MiB = 12.58 MB -> 0.126 ms at 100 GB/s.
  Built built = DotAndAdd(1024, DType::kF32);
  Result<InstructionCost> cost = EstimateInstruction(*built.dot, kDevice, kExact);
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_DOUBLE_EQ(cost->flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(cost->bytes, 3.0 * 4 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(cost->seconds, 2.0 * 1024 * 1024 * 1024 / 1e12);
  EXPECT_TRUE(cost->compute_bound);
  // The efficiency divides the peak: 75% of peak takes 4/3 as long.
  Result<InstructionCost> real = EstimateInstruction(*built.dot, kDevice, {.matmul = 0.75});
  EXPECT_DOUBLE_EQ(real->seconds, cost->seconds / 0.75);
}

TEST(ComputeCostTest, ElementwiseIsMemoryBoundAndMatmulUsesItsInputType) {
  // The add: 1024^2 FLOP = 1 us; 3 * 4 MiB = 126 us at 100 GB/s.
  Built f32 = DotAndAdd(1024, DType::kF32);
  Result<InstructionCost> add = EstimateInstruction(*f32.add, kDevice, kExact);
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  EXPECT_FALSE(add->compute_bound);
  EXPECT_DOUBLE_EQ(add->seconds, 3.0 * 4 * 1024 * 1024 / 1e11);
  // In f16 the matmul runs at the f16 peak, 4x the f32 one.
  Built f16 = DotAndAdd(1024, DType::kF16);
  Result<InstructionCost> dot = EstimateInstruction(*f16.dot, kDevice, kExact);
  EXPECT_DOUBLE_EQ(dot->seconds, 2.0 * 1024 * 1024 * 1024 / 4e12);
}

TEST(ComputeCostTest, ComputationSumsItsKernelsAndMarkersAreFree) {
  Built built = DotAndAdd(1024, DType::kF32);
  Result<ComputationCost> total = EstimateComputation(*built.module->entry(), kDevice, kExact);
  ASSERT_TRUE(total.ok()) << total.status().ToString();
  const double dot = 2.0 * 1024 * 1024 * 1024 / 1e12;
  const double add = 3.0 * 4 * 1024 * 1024 / 1e11;
  EXPECT_DOUBLE_EQ(total->seconds, dot + add);
  EXPECT_DOUBLE_EQ(total->compute_bound_seconds, dot);
}

TEST(ComputeCostTest, EveryKernelPaysItsLaunchOnceAndNothingElseDoes) {
  // 8x8: the dot's 1024 FLOP take 1 ns and its 768 B 7.68 ns, so a 1 us launch dominates.
  Built built = DotAndAdd(8, DType::kF32);
  DeviceThroughput device = kDevice;
  device.kernel_launch_s = 1e-6;
  Result<InstructionCost> dot = EstimateInstruction(*built.dot, device, kExact);
  ASSERT_TRUE(dot.ok()) << dot.status().ToString();
  EXPECT_DOUBLE_EQ(dot->launch_seconds, 1e-6);
  EXPECT_DOUBLE_EQ(dot->seconds, 3.0 * 8 * 8 * 4 / 1e11 + 1e-6);
  // Parameters and the layer boundary launch nothing: two kernels in all.
  Result<ComputationCost> total = EstimateComputation(*built.module->entry(), device, kExact);
  Result<ComputationCost> free = EstimateComputation(*built.module->entry(), kDevice, kExact);
  EXPECT_DOUBLE_EQ(total->seconds - free->seconds, 2e-6);
  // A value fused into its reader runs in the reader's kernel: no launch of its own.
  const FusedValues fused = {built.dot};
  EXPECT_EQ(LaunchSeconds(*built.dot, device, fused), 0);
  EXPECT_EQ(LaunchSeconds(*built.add, device, fused), 1e-6);
  EXPECT_EQ(LaunchSeconds(*built.dot->operand(0), device), 0);  // a parameter
}

TEST(ComputeCostTest, ClusterDevicesGiveTheirDatasheetFigures) {
  const DeviceThroughput v100 = ThroughputOf(cluster::V100Sxm2(16));
  EXPECT_EQ(v100.peak_flops.at(DType::kF16), cluster::V100Sxm2(16).PeakFlops("f16"));
  EXPECT_EQ(v100.memory_bandwidth, cluster::V100Sxm2(16).memory_bandwidth);
  EXPECT_EQ(v100.peak_flops.count(DType::kBF16), 0u);  // V100 has no bf16 units
  EXPECT_EQ(v100.kernel_launch_s, cluster::V100Sxm2(16).kernel_launch_s);
  EXPECT_GT(v100.kernel_launch_s, 0);
}

TEST(ComputeCostTest, MissingFiguresAreErrors) {
  Built built = DotAndAdd(8, DType::kF32);
  const DeviceThroughput no_f32{{{DType::kF16, 1e12}}, 1e11};
  EXPECT_THAT(EstimateInstruction(*built.dot, no_f32).status().message(),
              HasSubstr("computes in f32, for which the device has no peak FLOP/s"));
  // Elementwise arithmetic without a figure of its own falls back to f32, and here there is none.
  EXPECT_FALSE(EstimateInstruction(*built.add, no_f32).ok());
  // With an f32 figure, f16's elementwise add (no f16 figure) uses it.
  Built f16 = DotAndAdd(8, DType::kF16);
  const DeviceThroughput f32_only{{{DType::kF32, 1e12}}, 1e11};
  EXPECT_TRUE(EstimateInstruction(*f16.add, f32_only).ok());
  EXPECT_FALSE(EstimateInstruction(*f16.dot, f32_only).ok());
  const DeviceThroughput no_bandwidth{{{DType::kF32, 1e12}}, 0};
  EXPECT_THAT(EstimateInstruction(*built.dot, no_bandwidth).status().message(),
              HasSubstr("memory bandwidth is 0"));
}

}  // namespace
}  // namespace alpa::cost
