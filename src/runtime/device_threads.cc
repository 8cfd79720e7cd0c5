#include "runtime/device_threads.h"

namespace alpa::runtime {

DeviceThreads::DeviceThreads(int64_t devices) : statuses_(static_cast<size_t>(devices)) {
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
