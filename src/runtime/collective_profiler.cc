#include "runtime/collective_profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

namespace alpa::runtime {
namespace {

// Runs `count` collectives of kind `kind` (an index into ProfiledCollectives()) on `elements`,
// in `buffers` (grown to the largest command so far and reused), and sets `seconds` (may be null)
// to the time from the barrier that starts them to the end of the last.
Status RunCollectives(Communicator& comm, DeviceGroup group, int64_t kind, int64_t elements,
                      int64_t count, CollectiveTimer::Buffers& buffers, double* seconds) {
  const int64_t devices = static_cast<int64_t>(group.size());
  // Input and output counts per kind (communicator.h's size rules).
  const int64_t in = kind == 1 ? elements / devices : elements;
  const int64_t out = kind == 2 ? elements / devices : elements;
  if (static_cast<int64_t>(buffers.input.size()) < in) buffers.input.assign(in, 1.0f);
  if (static_cast<int64_t>(buffers.output.size()) < out) buffers.output.assign(out, 0.0f);
  const ConstBuffer input{ir::DType::kF32, buffers.input.data(), in};
  const MutableBuffer output{ir::DType::kF32, buffers.output.data(), out};
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

CollectiveTimer::CollectiveTimer(int64_t devices)
    : world_(devices), group_(devices), buffers_(devices), threads_(devices) {
  ALPA_CHECK(devices >= 2, "timing collectives needs at least 2 devices, found {}", devices);
  std::iota(group_.begin(), group_.end(), 0);
}

Result<double> CollectiveTimer::Time(std::string_view kind, int64_t elements, int64_t count) {
  const std::vector<std::string>& kinds = ProfiledCollectives();
  const int64_t index = std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
  if (index == static_cast<int64_t>(kinds.size())) {
    return InvalidArgument("'{}' is not a profiled collective", kind);
  }
  double seconds = 0;
  const std::vector<Status> statuses = threads_.Run([&](int64_t device) {
    return RunCollectives(world_.device(device), group_, index, elements, count,
                          buffers_[static_cast<size_t>(device)], device == 0 ? &seconds : nullptr);
  });
  for (size_t device = 0; device < statuses.size(); ++device) {
    if (!statuses[device].ok()) {
      return statuses[device].WithContext(fmt::format("{} on device {}", kind, device));
    }
  }
  return seconds;
}

}  // namespace alpa::runtime
