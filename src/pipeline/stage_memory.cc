#include "pipeline/stage_memory.h"

#include <algorithm>
#include <limits>
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
    for (const auto& [field, bytes] : {std::pair{"temporary_bytes", stages[j].temporary_bytes},
                                       {"update_temporary_bytes", stages[j].update_temporary_bytes},
                                       {"gradient_sum_bytes", stages[j].gradient_sum_bytes}}) {
      if (bytes < 0) {
        return InvalidArgument("stages[{}].{} is {}: it must be >= 0", j, field, bytes);
      }
    }
    if (stages[j].gradient_sum_bytes > stages[j].static_bytes) {
      return InvalidArgument("stages[{}].gradient_sum_bytes is {}: more than its static_bytes, {}",
                             j, stages[j].gradient_sum_bytes, stages[j].static_bytes);
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
  // Per device, walking its tasks in order (simulated.tasks lists them device by device): the
  // gradients' sums not yet held, the activations held and the micro-batches they belong to.
  std::vector<int64_t> pending(num_devices, 0);
  for (size_t j = 0; j < stages.size(); ++j) {
    pending[j % num_devices] += stages[j].gradient_sum_bytes;
  }
  std::vector<bool> summing(stages.size(), false);  // a backward of the stage has ended
  std::vector<int64_t> activations(num_devices, 0);
  std::vector<int> in_flight(num_devices, 0);
  std::vector<int64_t> held(num_devices, std::numeric_limits<int64_t>::min());  // the most so far
  for (const TaskTiming& timing : simulated.tasks) {
    const auto d = static_cast<size_t>(timing.device);
    const auto j = static_cast<size_t>(timing.stage);
    if (timing.task.kind == TaskKind::kForward) {
      activations[d] += stages[j].activation_bytes;
      ++in_flight[d];
    }
    const int64_t bytes = activations[d] + stages[j].temporary_bytes - pending[d];
    if (bytes > held[d]) {
      held[d] = bytes;
      DeviceMemory& device = memory.devices[d];
      device.pending_gradient_bytes = pending[d];
      device.activation_bytes = activations[d];
      device.peak_in_flight = in_flight[d];
      device.temporary_bytes = stages[j].temporary_bytes;
    }
    if (timing.task.kind == TaskKind::kBackward) {
      activations[d] -= stages[j].activation_bytes;
      --in_flight[d];
      if (!summing[j]) pending[d] -= stages[j].gradient_sum_bytes;
      summing[j] = true;
    }
  }
  for (size_t d = 0; d < num_devices; ++d) {
    DeviceMemory& device = memory.devices[d];
    device.static_bytes = simulated.devices[d].static_bytes;
    for (size_t j = d; j < stages.size(); j += num_devices) {  // its chunks
      device.update_temporary_bytes =
          std::max(device.update_temporary_bytes, stages[j].update_temporary_bytes);
    }
    device.peak_bytes =
        device.static_bytes +
        std::max(device.activation_bytes + device.temporary_bytes - device.pending_gradient_bytes,
                 device.update_temporary_bytes);
    if (device.peak_bytes > memory.required_bytes) {
      memory.required_bytes = device.peak_bytes;
      memory.bottleneck_device = static_cast<int>(d);
    }
  }
  return memory;
}

}  // namespace alpa::pipeline
