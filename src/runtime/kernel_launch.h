// What our runtime spends on one instruction beyond its kernel's own work: the executor's dispatch
// (the step's bookkeeping, the kernel's lookup, its result's allocation, the operands' release).
// The cost model adds it to every kernel as the device's kernel_launch_s (cost/compute_cost.h),
// as it adds a GPU kernel's launch; it weighs where kernels are short (gpt-tiny's step runs about
// 1700 instructions of a few microseconds each). Timed on a chain of kKernelsPerChain adds of one
// f32 each through the device executor (each sum also an output, so that no add fuses into the
// next), whose arithmetic takes a nanosecond: what is left is the dispatch.
#ifndef ALPA_RUNTIME_KERNEL_LAUNCH_H_
#define ALPA_RUNTIME_KERNEL_LAUNCH_H_

#include <cstdint>
#include <memory>

#include "ir/module.h"
#include "runtime/instruction_list.h"
#include "support/status.h"

namespace alpa::runtime {

// The profile figure's kind (profiler.h's Measurement::kind).
inline constexpr char kKernelLaunchKind[] = "kernel-launch";

class KernelLaunchTimer {
 public:
  static constexpr int64_t kKernelsPerChain = 256;

  // Builds and compiles the chain (fast kernels, as the runtime runs them).
  static Result<std::unique_ptr<KernelLaunchTimer>> Create();

  // Seconds per kernel, times `count`: the chain run `count` times, its time over
  // kKernelsPerChain. A BatchTimer for profiler.h's MakeBatchSampler, whose operation is then one
  // kernel.
  Result<double> Time(int64_t count) const;

 private:
  std::unique_ptr<ir::Module> module_;
  InstructionList list_;
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_KERNEL_LAUNCH_H_
