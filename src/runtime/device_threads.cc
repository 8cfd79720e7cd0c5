#include "runtime/device_threads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <string>

namespace alpa::runtime {

Status CombineDeviceStatuses(const std::vector<Status>& statuses, std::string_view what) {
  std::vector<std::string> errors, timeouts;
  StatusCode code = StatusCode::kDeadlineExceeded;
  for (size_t device = 0; device < statuses.size(); ++device) {
    const Status& status = statuses[device];
    if (status.ok()) continue;
    const bool timeout = status.code() == StatusCode::kDeadlineExceeded;
    if (!timeout && errors.empty()) code = status.code();
    (timeout ? timeouts : errors).push_back(fmt::format("device {}: {}", device, status.message()));
  }
  if (errors.empty() && timeouts.empty()) return Status::Ok();
  errors.insert(errors.end(), timeouts.begin(), timeouts.end());
  return Status(code, fmt::format("{} on {} devices failed: {}", what, statuses.size(),
                                  fmt::join(errors, "; ")));
}
namespace {

// Binds the calling thread to `cores`. A binding the system refuses (a core taken away since
// AllowedCores) leaves the thread unbound: it then runs where the scheduler puts it, slower at
// worst, never wrong.
void BindToCores(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : cores) CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace

std::vector<int> AllowedCores() {
  std::vector<int> cores;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int core = 0; core < CPU_SETSIZE; ++core) {
      if (CPU_ISSET(core, &set)) cores.push_back(core);
    }
  }
  if (cores.empty()) {
    const int count = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    for (int core = 0; core < count; ++core) cores.push_back(core);
  }
  return cores;
}

std::vector<int> DeviceCores(int64_t device, int64_t devices, const std::vector<int>& allowed) {
  const auto size = static_cast<int64_t>(allowed.size());
  if (devices > size) return {allowed[static_cast<size_t>(device % size)]};
  const int64_t share = size / devices;
  return std::vector<int>(allowed.begin() + device * share, allowed.begin() + (device + 1) * share);
}

DeviceThreads::DeviceThreads(int64_t devices) : statuses_(static_cast<size_t>(devices)) {
  const std::vector<int> allowed = AllowedCores();
  for (int64_t device = 0; device < devices; ++device) {
    cores_.push_back(DeviceCores(device, devices, allowed));
  }
  for (int64_t device = 0; device < devices; ++device) {
    threads_.emplace_back([this, device] { Serve(device); });
  }
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> turn(turn_);
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  started_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

std::vector<Status> DeviceThreads::Run(const std::function<Status(int64_t)>& job) {
  std::lock_guard<std::mutex> turn(turn_);
  std::unique_lock<std::mutex> lock(mutex_);
  job_ = &job;
  running_ = devices();
  ++generation_;
  started_.notify_all();
  finished_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
  return statuses_;
}

void DeviceThreads::Serve(int64_t device) {
  BindToCores(cores_[static_cast<size_t>(device)]);
  uint64_t served = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    started_.wait(lock, [&] { return stopping_ || generation_ != served; });
    if (stopping_) return;
    served = generation_;
    const std::function<Status(int64_t)>& job = *job_;
    lock.unlock();
    Status status = job(device);
    lock.lock();
    statuses_[static_cast<size_t>(device)] = std::move(status);
    if (--running_ == 0) finished_.notify_one();
  }
}

}  // namespace alpa::runtime
