#include "cluster/device.h"

namespace alpa::cluster {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Kernel launch on NVIDIA GPUs (DeviceSpec::kernel_launch_s): no datasheet gives it. NVIDIA's
// "Getting Started with CUDA Graphs" (2019, on a V100) ran kernels of about 2.9 us back to back
// from a stream at about 3.8 us each: about 1 us a kernel beyond its own time. XLA launches its
// kernels the same way, one stream, ahead of the device.
constexpr double kGpuKernelLaunchSeconds = 1e-6;

}  // namespace

double DeviceSpec::PeakFlops(std::string_view dtype) const {
  auto it = peak_flops.find(std::string(dtype));
  return it == peak_flops.end() ? 0.0 : it->second;
}

const std::vector<std::string>& DisplayedDtypes() {
  static const std::vector<std::string> kDtypes = {"f64", "f32", "tf32", "f16", "bf16", "f8"};
  return kDtypes;
}

// NVIDIA Tesla V100 datasheet (SXM2 column): double precision 7.8 TFLOP/s, single precision
// 15.7 TFLOP/s, tensor performance (f16 inputs, f32 accumulate) 125 TFLOP/s, HBM2 900 GB/s,
// 16 or 32 GB. No bf16 or tf32 units. The memory is 16 (32) GiB of HBM2 (nvidia-smi: 16160 MiB
// usable of 16384).
DeviceSpec V100Sxm2(int64_t memory_gib) {
  DeviceSpec device;
  device.name = memory_gib == 32 ? "V100-SXM2-32GB" : "V100-SXM2-16GB";
  device.peak_flops = {{"f64", 7.8 * kTera}, {"f32", 15.7 * kTera}, {"f16", 125 * kTera}};
  device.memory_bytes = memory_gib * kGiB;
  device.memory_bandwidth = 900 * kGiga;
  device.kernel_launch_s = kGpuKernelLaunchSeconds;
  return device;
}

// NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column), dense figures (the datasheet's
// starred figures double them with structured sparsity; not used): FP64 9.7 TFLOP/s (19.5 on
// tensor cores, not used: only dot/conv can use them), FP32 19.5, TF32 tensor core 156,
// FP16/BF16 tensor core 312 TFLOP/s, HBM2 1,555 GB/s, 40 GB (40 GiB).
DeviceSpec A100Sxm40GB() {
  DeviceSpec device;
  device.name = "A100-SXM4-40GB";
  device.peak_flops = {{"f64", 9.7 * kTera},
                       {"f32", 19.5 * kTera},
                       {"tf32", 156 * kTera},
                       {"f16", 312 * kTera},
                       {"bf16", 312 * kTera}};
  device.memory_bytes = 40 * kGiB;
  device.memory_bandwidth = 1555 * kGiga;
  device.kernel_launch_s = kGpuKernelLaunchSeconds;
  return device;
}

// NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column), dense figures (half the datasheet's
// sparsity figures): FP64 34 TFLOP/s, FP32 67, TF32 tensor core 494.5, FP16/BF16 tensor core
// 989.5 (the datasheet's 1,979 is with sparsity), FP8 1,979 TFLOP/s, HBM3 3.35 TB/s, 80 GB
// (80 GiB).
DeviceSpec H100Sxm80GB() {
  DeviceSpec device;
  device.name = "H100-SXM5-80GB";
  device.peak_flops = {{"f64", 34 * kTera},    {"f32", 67 * kTera},     {"tf32", 494.5 * kTera},
                       {"f16", 989.5 * kTera}, {"bf16", 989.5 * kTera}, {"f8", 1979 * kTera}};
  device.memory_bytes = 80 * kGiB;
  device.memory_bandwidth = 3350 * kGiga;
  device.kernel_launch_s = kGpuKernelLaunchSeconds;
  return device;
}

// An analytic estimate, used until a profile is applied (runtime::ApplyProfile): one x86-64 core
// at about 2.5 GHz with two 256-bit FMA units does 2 units x 8 f32 lanes x 2 FLOP x 2.5e9 =
// 80 GFLOP/s f32 and half of that in f64. f16 and bf16 get the f32 figure: the CPU kernels widen
// them to f32 unless the core has 16-bit units (bf16 on AVX512-BF16 or AMX runs at about twice
// the f32 rate), which only a profile can tell. Memory bandwidth: about 10 GB/s per core (a
// socket's ~100 GB/s shared by ~10 cores). Kernel launch: our runtime's dispatch of one
// instruction, about 0.2 us (alpa profile's kernel-launch figure on the project's machines: 0.17
// us).
DeviceSpec CpuCoreEstimate(int64_t memory_bytes) {
  DeviceSpec device;
  device.name = "cpu-core";
  device.peak_flops = {
      {"f64", 40 * kGiga}, {"f32", 80 * kGiga}, {"f16", 80 * kGiga}, {"bf16", 80 * kGiga}};
  device.memory_bytes = memory_bytes;
  device.memory_bandwidth = 10 * kGiga;
  device.fuses_kernels = false;  // our runtime fuses elementwise loops only (ir/loop_fusion.h)
  device.kernel_launch_s = 0.2e-6;
  return device;
}

}  // namespace alpa::cluster
