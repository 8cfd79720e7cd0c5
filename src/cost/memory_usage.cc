#include "cost/memory_usage.h"

#include "cost/liveness.h"

namespace alpa::cost {

MemoryUsage NaivePeakMemory(const ir::Computation& computation) {
  const Liveness liveness = ComputeLiveness(computation);
  MemoryUsage usage;
  usage.peak_bytes = liveness.peak_bytes;
  usage.parameter_bytes = liveness.parameter_bytes;
  if (liveness.peak_step >= 0) {
    usage.peak_instruction = liveness.order[static_cast<size_t>(liveness.peak_step)];
  }
  return usage;
}

}  // namespace alpa::cost
