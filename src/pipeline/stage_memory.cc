#include "pipeline/stage_memory.h"

#include <algorithm>
#include <utility>

#include "pipeline/simulator.h"

namespace alpa::pipeline {

Result<PipelineMemory> PipelinePeakMemory(const std::vector<StageMemory>& stages,
                                          ScheduleKind schedule, int num_micro_batches,
                                          int num_chunks) {
  // Unit times: which micro-batches are in flight depends only on each device's task order.
  PipelineSpec spec;
  spec.num_micro_batches = num_micro_batches;
  spec.schedule = schedule;
  spec.num_chunks = num_chunks;
  for (size_t j = 0; j < stages.size(); ++j) {
    for (const auto& [field, bytes] :
         {std::pair{"temporary_bytes", stages[j].temporary_bytes},
          {"update_temporary_bytes", stages[j].update_temporary_bytes}}) {
      if (bytes < 0) {
        return InvalidArgument("stages[{}].{} is {}: it must be >= 0", j, field, bytes);
      }
    }
    StageSpec& stage = spec.stages.emplace_back();
    stage.forward_s = 1;
    stage.backward_s = 1;
    stage.static_bytes = stages[j].static_bytes;
    stage.activation_bytes = stages[j].activation_bytes;
  }
  ALPA_ASSIGN_OR_RETURN(const SimulationResult simulated, SimulatePipeline(spec));

  PipelineMemory memory;
  const size_t num_devices = simulated.devices.size();
  memory.devices.resize(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    const DeviceStats& stats = simulated.devices[d];
    DeviceMemory& device = memory.devices[d];
    device.static_bytes = stats.static_bytes;
    device.activation_bytes = stats.peak_bytes - stats.static_bytes;
    device.peak_in_flight = stats.peak_in_flight;
    for (size_t j = d; j < stages.size(); j += num_devices) {  // its chunks
      device.temporary_bytes = std::max(device.temporary_bytes, stages[j].temporary_bytes);
      device.update_temporary_bytes =
          std::max(device.update_temporary_bytes, stages[j].update_temporary_bytes);
    }
    device.peak_bytes =
        device.static_bytes +
        std::max(device.activation_bytes + device.temporary_bytes, device.update_temporary_bytes);
    if (device.peak_bytes > memory.required_bytes) {
      memory.required_bytes = device.peak_bytes;
      memory.bottleneck_device = static_cast<int>(d);
    }
  }
  return memory;
}

}  // namespace alpa::pipeline
