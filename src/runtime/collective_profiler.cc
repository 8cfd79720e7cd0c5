#include "runtime/collective_profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

namespace alpa::runtime {
namespace {

// Runs `count` collectives of kind `kind` (an index into ProfiledCollectives()) on `elements`,
// from `input` into `output`, and sets `seconds` (may be null) to the time from the barrier that
// starts them to the end of the last.
Status RunCollectives(Communicator& comm, DeviceGroup group, int64_t kind, int64_t elements,
                      int64_t count, void* input_data, void* output_data, double* seconds) {
  const int64_t devices = static_cast<int64_t>(group.size());
  // Input and output counts per kind (communicator.h's size rules).
  const int64_t in = kind == 1 ? elements / devices : elements;
  const int64_t out = kind == 2 ? elements / devices : elements;
  const ConstBuffer input{ir::DType::kF32, input_data, in};
  const MutableBuffer output{ir::DType::kF32, output_data, out};
  ALPA_RETURN_IF_ERROR(comm.Barrier(group));
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    switch (kind) {
      case 0:
        ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, input, output));
        break;
      case 1:
        ALPA_RETURN_IF_ERROR(comm.AllGather(group, input, output));
        break;
      case 2:
        ALPA_RETURN_IF_ERROR(comm.ReduceScatter(group, ReduceOp::kSum, input, output));
        break;
      default:
        ALPA_RETURN_IF_ERROR(comm.AllToAll(group, input, output));
        break;
    }
  }
  if (seconds != nullptr) {
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& ProfiledCollectives() {
  static const std::vector<std::string> kinds = {"all-reduce", "all-gather", "reduce-scatter",
                                                 "all-to-all"};
  return kinds;
}

bool IsProfiledCollective(std::string_view kind) {
  const std::vector<std::string>& kinds = ProfiledCollectives();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

int64_t CollectiveElements(int64_t bytes, int64_t devices) { return bytes / 4 / devices * devices; }

CollectiveTimer::CollectiveTimer(int64_t devices, int64_t placements, int64_t max_elements)
    : world_(devices),
      group_(devices),
      placements_(placements),
      max_elements_(max_elements),
      buffers_(devices),
      threads_(devices) {
  ALPA_CHECK(devices >= 2, "timing collectives needs at least 2 devices, found {}", devices);
  ALPA_CHECK(placements >= 1, "placements must be at least 1, found {}", placements);
  std::iota(group_.begin(), group_.end(), 0);
  // Each device maps its own buffers, on its own thread (the pages' first touch).
  threads_.Run([&](int64_t device) {
    const std::vector<PlacedBuffers::Spec> specs(2, {ir::DType::kF32, max_elements});
    buffers_[static_cast<size_t>(device)] = std::make_unique<PlacedBuffers>(specs, placements);
    return Status::Ok();
  });
}

Result<double> CollectiveTimer::Time(std::string_view kind, int64_t elements, int64_t count,
                                     int64_t placement) {
  const std::vector<std::string>& kinds = ProfiledCollectives();
  const int64_t index = std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
  if (index == static_cast<int64_t>(kinds.size())) {
    return InvalidArgument("'{}' is not a profiled collective", kind);
  }
  if (elements < 0 || elements > max_elements_) {
    return InvalidArgument("{} of {} elements: the timer's buffers hold 0 to {}", kind, elements,
                           max_elements_);
  }
  if (placement < 0 || placement >= placements_) {
    return InvalidArgument("placement {} of {} placements", placement, placements_);
  }
  double seconds = 0;
  const std::vector<Status> statuses = threads_.Run([&](int64_t device) {
    const PlacedBuffers& buffers = *buffers_[static_cast<size_t>(device)];
    return RunCollectives(world_.device(device), group_, index, elements, count,
                          buffers.data(placement, 0), buffers.data(placement, 1),
                          device == 0 ? &seconds : nullptr);
  });
  for (size_t device = 0; device < statuses.size(); ++device) {
    if (!statuses[device].ok()) {
      return statuses[device].WithContext(fmt::format("{} on device {}", kind, device));
    }
  }
  return seconds;
}

}  // namespace alpa::runtime
