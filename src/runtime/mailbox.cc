#include "runtime/mailbox.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>

namespace alpa::runtime {

Status CheckMessageShape(int64_t source, int64_t tag, const ir::Shape& got,
                         const ir::Shape& expected, int64_t target) {
  if (got == expected) return Status::Ok();
  return Internal("message {} from device {} is {}, device {} expects {}", tag, source,
                  got.ToString(), target, expected.ToString());
}

Status InProcessMailbox::Post(int64_t source, int64_t target, int64_t tag, ir::Literal message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [at, added] = messages_.try_emplace(Key{source, target, tag}, std::move(message));
    if (!added) {
      return Internal("message {} from device {} to device {} posted again before it was taken",
                      tag, source, target);
    }
  }
  arrived_.notify_all();
  return Status::Ok();
}

Result<ir::Literal> InProcessMailbox::Take(int64_t source, int64_t target, int64_t tag,
                                           const ir::Shape& shape) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Key key{source, target, tag};
  const bool arrived = arrived_.wait_for(lock, std::chrono::duration<double>(timeout_seconds_),
                                         [&] { return messages_.count(key) > 0; });
  if (!arrived) {
    return Status(
        StatusCode::kDeadlineExceeded,
        fmt::format("no message {} from device {} within {} s", tag, source, timeout_seconds_));
  }
  auto node = messages_.extract(key);
  ALPA_RETURN_IF_ERROR(CheckMessageShape(source, tag, node.mapped().shape(), shape, target));
  return std::move(node.mapped());
}

}  // namespace alpa::runtime
