// Compute time of instructions on one device by the roofline model:
//
//   time(i) = max(flops(i) / (peak(dtype(i)) * compute_efficiency(i)),
//                 bytes(i) / (memory_bandwidth * memory_efficiency))  +  launch(i)
//   launch(i) = the device's kernel_launch_s when i is a kernel of its own (neither fused into
//               its readers nor free, below), else 0
//
// flops as cost/flop_count.h counts them; bytes as XLA's HloCostAnalysis "bytes accessed": every
// operand read once and the result written once (a fusion is one kernel: its operands and its
// result, not its body's temporaries). dtype(i) is the operands' type for dot and convolution
// (f16 inputs run on f16 tensor cores whatever they accumulate in), else the result's; other
// arithmetic of a type the device lists no peak for (a compare's pred, integers, bf16 on a V100)
// runs on the vector units at the f32 peak.
//
// Kernels are those of kernel_fusion.h: a value fused into its readers moves no bytes (its flops
// remain), and the kernel rooted at each other instruction reads each of its inputs once (a
// slice only the part it keeps) and writes its result. A device whose compiler fuses
// (DeviceThroughput::fuses_kernels: the GPUs, which XLA compiles) fuses by kernel_fusion.h's rules;
// on the others (a CPU core under our runtime) only the elementwise chains the runtime runs as
// loops are fused (ir/loop_fusion.h), and every other instruction is its own kernel.
// Instructions that move no data (parameter, constant, tuple, get-tuple-element, bitcast, and
// layout-free markers such as layer boundaries) cost 0. A computation's time is the sum over its
// instructions in any order: one device runs one kernel at a time, and overlap is not modelled.
//
// The efficiency factors are the share of the datasheet figure real kernels reach; the defaults
// are assumptions stated below, to be replaced by measured ones from a profile database.
#ifndef ALPA_COST_COMPUTE_COST_H_
#define ALPA_COST_COMPUTE_COST_H_

#include <map>

#include "cluster/device.h"
#include "cost/kernel_fusion.h"
#include "ir/computation.h"
#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::cost {

struct DeviceThroughput {
  std::map<ir::DType, double> peak_flops;  // per second; a dtype without an entry is an error
  double memory_bandwidth = 0;             // bytes per second
  bool fuses_kernels = false;              // cluster::DeviceSpec::fuses_kernels
  double kernel_launch_s = 0;              // cluster::DeviceSpec::kernel_launch_s
};

// A cluster device's figures for the roofline: its peaks for the dtypes the IR has (a "tf32" or
// "f8" figure has no IR type and is left out), its memory bandwidth and whether it fuses.
DeviceThroughput ThroughputOf(const cluster::DeviceSpec& device);

// The values of `computation` kept inside kernels on `device`: FuseIntoReaders(computation) when
// it fuses kernels, else what the runtime's loops keep: the values fused into them
// (ir::LoopFusedValues) and the broadcasts they read in place (ir::BroadcastsReadInPlace).
FusedValues FusionFor(const DeviceThroughput& device, const ir::Computation& computation);

struct Efficiency {
  // Large GEMMs and convolutions reach 70-80% of the datasheet peak in cuBLAS/cuDNN and oneDNN;
  // 0.75 is the middle.
  double matmul = 0.75;
  // Other arithmetic rarely uses the tensor units; it is nearly always memory bound, so its
  // compute share matters little.
  double other_compute = 0.5;
  // Streaming kernels reach about 80% of the HBM/DRAM datasheet bandwidth (STREAM-like copies).
  double memory = 0.8;
};

struct InstructionCost {
  double flops = 0;
  double bytes = 0;
  double seconds = 0;          // the roofline's time plus the launch
  double launch_seconds = 0;   // launch(i): the part of `seconds` no sharding divides
  bool compute_bound = false;  // the flops term is the larger one
};

// launch(i) above: the device's kernel launch time when `instruction` is a kernel of its own.
double LaunchSeconds(const ir::Instruction& instruction, const DeviceThroughput& device,
                     const FusedValues& fused = NoFusion());

// `fused`: the values of the instruction's computation kept inside kernels (FusionFor).
Result<InstructionCost> EstimateInstruction(const ir::Instruction& instruction,
                                            const DeviceThroughput& device,
                                            const Efficiency& efficiency = {},
                                            const FusedValues& fused = NoFusion());

struct ComputationCost {
  double seconds = 0;
  double flops = 0;
  double bytes = 0;
  double compute_bound_seconds = 0;  // the part of `seconds` spent in compute-bound instructions

  void Add(const InstructionCost& cost);
  void Add(const ComputationCost& other, double times);
};

// Sum over the instructions of `computation` (its own, not those of called computations, which
// their calling instruction accounts for), fused when the device fuses kernels.
Result<ComputationCost> EstimateComputation(const ir::Computation& computation,
                                            const DeviceThroughput& device,
                                            const Efficiency& efficiency = {});

}  // namespace alpa::cost

#endif  // ALPA_COST_COMPUTE_COST_H_
