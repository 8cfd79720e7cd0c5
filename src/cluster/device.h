// A device type: what one accelerator (or one CPU core, for the `local` preset) can do.
//
// Plain data. Peak FLOP/s are keyed by a dtype name ("f64", "f32", "tf32", "f16", "bf16", "f8"),
// spelled as in HLO text; the cluster layer does not depend on ir, so the key is a string. A dtype
// a device has no figure for is absent (PeakFlops returns 0): e.g. V100 has no bf16 units.
// Figures are dense (no structured-sparsity doubling), from the vendors' datasheets, cited where
// each preset device is defined (device.cc).
#ifndef ALPA_CLUSTER_DEVICE_H_
#define ALPA_CLUSTER_DEVICE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace alpa::cluster {

struct DeviceSpec {
  std::string name;                          // e.g. "V100-SXM2-16GB"
  std::map<std::string, double> peak_flops;  // dtype name -> FLOP/s (dense)
  int64_t memory_bytes = 0;                  // device memory
  double memory_bandwidth = 0;               // B/s, device memory <-> compute
  // Whether the compiler for this device fuses as XLA on GPUs does: elementwise work, broadcasts
  // and slices into the kernels that read them (cost/kernel_fusion.h). Our CPU runtime does not;
  // it fuses only chains of elementwise arithmetic into loops (ir/loop_fusion.h). The compute
  // and memory models follow it.
  bool fuses_kernels = true;
  // Seconds each kernel costs beyond its roofline time: a GPU kernel's launch (the gap between
  // back-to-back kernels of a stream), our runtime's dispatch of one instruction. It weighs where
  // kernels are short: gpt-tiny's step is about 1700 instructions of microseconds each.
  double kernel_launch_s = 0;

  // FLOP/s for `dtype`, 0 when the device has no figure for it.
  double PeakFlops(std::string_view dtype) const;

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// The dtype names shown by `alpa cluster show`, in display order. Other keys are allowed in files.
const std::vector<std::string>& DisplayedDtypes();

// Device types of the presets (figures and sources in device.cc).
DeviceSpec V100Sxm2(int64_t memory_gib);  // 16 or 32
DeviceSpec A100Sxm40GB();
DeviceSpec H100Sxm80GB();
// One CPU core of this machine: an analytic estimate, not a measurement (see device.cc); the
// `local` preset says so in its note ("figures: estimated, not profiled"). runtime::ApplyProfile
// replaces the figures with those `alpa profile` measured. `memory_bytes` is the share of the
// host's memory given to the core.
DeviceSpec CpuCoreEstimate(int64_t memory_bytes);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_DEVICE_H_
