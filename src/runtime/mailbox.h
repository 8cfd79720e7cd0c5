// Tagged messages between devices, for pipelined programs (pipeline_executor.h): a send posts its
// message and returns at once, so no order of sends and receives among the devices can deadlock on
// a send; a receive waits for its message up to a timeout. Two engines, one interface:
//   in-process  one InProcessMailbox shared by the device threads: a post leaves the message in
//               a map, a take waits on a condition variable;
//   MPI         MpiWorld::mailbox() (mpi_communicator.h): a post is an MPI_Isend that keeps its
//               message until the receiver has it, a take an MPI_Irecv polled up to the timeout,
//               on a communicator of their own (so their tags never meet the collectives').
// Messages between one source and one target under one tag arrive in the order they were posted
// (MPI's non-overtaking rule; in-process a tag is taken before it is posted again), so a tag can
// be reused from one step to the next.
#ifndef ALPA_RUNTIME_MAILBOX_H_
#define ALPA_RUNTIME_MAILBOX_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "ir/literal.h"
#include "ir/shape.h"
#include "support/status.h"

namespace alpa::runtime {

class Mailbox {
 public:
  virtual ~Mailbox() = default;
  // Sends `message` from device `source` to device `target` under `tag`, without waiting.
  virtual Status Post(int64_t source, int64_t target, int64_t tag, ir::Literal message) = 0;
  // The message from `source` to `target` under `tag`, of `shape` (a message of another shape is
  // an error naming both), waiting for it up to the engine's timeout.
  virtual Result<ir::Literal> Take(int64_t source, int64_t target, int64_t tag,
                                   const ir::Shape& shape) = 0;
  // Waits until every message `source` posted has reached its receiver, up to the timeout: what
  // a device does at the end of its step, so that no message outlives the step that sent it.
  virtual Status Flush(int64_t source) = 0;
};

class InProcessMailbox final : public Mailbox {
 public:
  explicit InProcessMailbox(double timeout_seconds) : timeout_seconds_(timeout_seconds) {}

  Status Post(int64_t source, int64_t target, int64_t tag, ir::Literal message) override;
  Result<ir::Literal> Take(int64_t source, int64_t target, int64_t tag,
                           const ir::Shape& shape) override;
  // A message is in the receiver's hands once posted: nothing to wait for.
  Status Flush(int64_t) override { return Status::Ok(); }

 private:
  using Key = std::tuple<int64_t, int64_t, int64_t>;  // (source, target, tag)
  double timeout_seconds_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<Key, ir::Literal> messages_;
};

// "message 12 from device 0 is f32[4,8], device 1 expects f32[8,4]": the error of a take whose
// message does not have the shape the receiver expects, shared by the engines.
Status CheckMessageShape(int64_t source, int64_t tag, const ir::Shape& got,
                         const ir::Shape& expected, int64_t target);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_MAILBOX_H_
