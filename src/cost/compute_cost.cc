#include "cost/compute_cost.h"

#include <algorithm>

#include "cost/flop_count.h"
#include "ir/broadcast_folding.h"
#include "ir/layer_boundary.h"
#include "ir/loop_fusion.h"

namespace alpa::cost {
namespace {

using ir::Instruction;
using ir::Opcode;

// Instructions that only name or regroup buffers: no kernel runs for them.
bool MovesNoData(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAfterAll:
      return true;
    default:
      return ir::AsLayerBoundary(instruction).has_value();
  }
}

bool IsMatmul(Opcode opcode) { return opcode == Opcode::kDot || opcode == Opcode::kConvolution; }

ir::DType ComputeType(const Instruction& instruction) {
  const ir::Shape& shape =
      IsMatmul(instruction.opcode()) ? instruction.operand(0)->shape() : instruction.shape();
  return shape.IsArray() ? shape.dtype() : ir::DType::kF32;
}

// Control flow runs its callees' instructions: their costs, not one kernel's.
Result<ComputationCost> ControlFlowCost(const Instruction& instruction,
                                        const DeviceThroughput& device,
                                        const Efficiency& efficiency) {
  ComputationCost total;
  const auto& callees = instruction.called_computations();
  if (instruction.opcode() == Opcode::kWhile) {
    ALPA_ASSIGN_OR_RETURN(std::optional<int64_t> trips, KnownTripCount(instruction));
    const double n = static_cast<double>(trips.value_or(1));
    ALPA_ASSIGN_OR_RETURN(ComputationCost condition,
                          EstimateComputation(*callees[0], device, efficiency));
    ALPA_ASSIGN_OR_RETURN(ComputationCost body,
                          EstimateComputation(*callees[1], device, efficiency));
    total.Add(body, n);
    total.Add(condition, n + 1);
    return total;
  }
  // call: its one callee; conditional: the most expensive branch.
  ComputationCost most;
  for (const ir::Computation* callee : callees) {
    ALPA_ASSIGN_OR_RETURN(ComputationCost branch, EstimateComputation(*callee, device, efficiency));
    if (branch.seconds >= most.seconds) most = branch;
  }
  total.Add(most, 1);
  return total;
}

}  // namespace

DeviceThroughput ThroughputOf(const cluster::DeviceSpec& device) {
  DeviceThroughput throughput;
  for (const auto& [name, flops] : device.peak_flops) {
    if (std::optional<ir::DType> dtype = ir::ParseDType(name))
      throughput.peak_flops[*dtype] = flops;
  }
  throughput.memory_bandwidth = device.memory_bandwidth;
  throughput.fuses_kernels = device.fuses_kernels;
  throughput.kernel_launch_s = device.kernel_launch_s;
  return throughput;
}

FusedValues FusionFor(const DeviceThroughput& device, const ir::Computation& computation) {
  if (device.fuses_kernels) return FuseIntoReaders(computation);
  FusedValues in_loops = ir::LoopFusedValues(computation);
  in_loops.merge(ir::BroadcastsReadInPlace(computation));
  return in_loops;
}

void ComputationCost::Add(const InstructionCost& cost) {
  seconds += cost.seconds;
  flops += cost.flops;
  bytes += cost.bytes;
  if (cost.compute_bound) compute_bound_seconds += cost.seconds;
}

void ComputationCost::Add(const ComputationCost& other, double times) {
  seconds += times * other.seconds;
  flops += times * other.flops;
  bytes += times * other.bytes;
  compute_bound_seconds += times * other.compute_bound_seconds;
}

double LaunchSeconds(const Instruction& instruction, const DeviceThroughput& device,
                     const FusedValues& fused) {
  const bool kernel = !MovesNoData(instruction) && !fused.contains(&instruction);
  return kernel ? device.kernel_launch_s : 0;
}

Result<InstructionCost> EstimateInstruction(const Instruction& instruction,
                                            const DeviceThroughput& device,
                                            const Efficiency& efficiency,
                                            const FusedValues& fused) {
  if (MovesNoData(instruction)) return InstructionCost{};
  if (!(device.memory_bandwidth > 0)) {
    return InvalidArgument("the device's memory bandwidth is {}; it must be positive",
                           device.memory_bandwidth);
  }
  InstructionCost cost;
  ALPA_ASSIGN_OR_RETURN(FlopCount flops, CountFlops(instruction));
  cost.flops = flops.flops;
  cost.bytes = fused.contains(&instruction) ? 0 : KernelBytes(instruction, fused);
  double compute_seconds = 0;
  if (cost.flops > 0) {
    const bool matmul = IsMatmul(instruction.opcode());
    const ir::DType dtype = ComputeType(instruction);
    auto peak = device.peak_flops.find(dtype);
    if (peak == device.peak_flops.end() && !matmul) peak = device.peak_flops.find(ir::DType::kF32);
    if (peak == device.peak_flops.end() || !(peak->second > 0)) {
      return InvalidArgument("%{} computes in {}, for which the device has no peak FLOP/s",
                             instruction.name(), ir::DTypeName(dtype));
    }
    compute_seconds =
        cost.flops / (peak->second * (matmul ? efficiency.matmul : efficiency.other_compute));
  }
  const double memory_seconds = cost.bytes / (device.memory_bandwidth * efficiency.memory);
  cost.launch_seconds = LaunchSeconds(instruction, device, fused);
  cost.seconds = std::max(compute_seconds, memory_seconds) + cost.launch_seconds;
  cost.compute_bound = compute_seconds > memory_seconds;
  return cost;
}

Result<ComputationCost> EstimateComputation(const ir::Computation& computation,
                                            const DeviceThroughput& device,
                                            const Efficiency& efficiency) {
  const FusedValues fused = FusionFor(device, computation);
  ComputationCost total;
  for (const auto& instruction : computation.instructions()) {
    const Opcode opcode = instruction->opcode();
    if (opcode == Opcode::kWhile || opcode == Opcode::kCall || opcode == Opcode::kConditional) {
      ALPA_ASSIGN_OR_RETURN(ComputationCost inner,
                            ControlFlowCost(*instruction, device, efficiency));
      total.Add(inner, 1);
      continue;
    }
    ALPA_ASSIGN_OR_RETURN(InstructionCost cost,
                          EstimateInstruction(*instruction, device, efficiency, fused));
    total.Add(cost);
  }
  return total;
}

}  // namespace alpa::cost
