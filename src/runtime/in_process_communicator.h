// The in-process engine of the communicator (communicator.h): devices are threads of this process
// and collectives read their peers' buffers directly through shared memory.
//
// How a collective runs. The members of a group meet in a round (one per call on the group, matched
// by each device's count of calls on it): each posts its buffers, and once all have arrived every
// member does its share of the data movement by reading and writing peers' buffers in place, then
// waits until every member is done before it returns (its buffers may be reused afterwards). Two
// synchronisation points per call, no staging buffer: each byte is copied once into its
// destination. With P members and n bytes:
//   all-reduce      member i reduces block i (n/P bytes) of every member's input into its own
//                   output and copies the result into block i of every peer's output, slice by
//                   slice while it is in cache: reduce-scatter and all-gather fused, with no
//                   barrier between them. Each member reads n and writes n from and to memory,
//                   as a memcpy of n does.
//   all-gather      member i copies every member's input into its output (n per member).
//   reduce-scatter  member i reduces block i of every input into its output.
//   all-to-all      member i copies block i of every member's input.
//   broadcast, collective-permute, send/recv: the receiver copies from the sender's buffer.
//
// Timeout. A member waits at most `timeout_seconds` for the others to arrive; then the round fails
// for every member: those waiting end at once with an error naming the collective, the group and
// the devices that never arrived, and a latecomer gets the same error without touching the others'
// buffers. Once all have arrived the data movement is bounded work and is not timed. Members whose
// calls disagree (kind, dtype, counts, reduction, root, pairs) or whose arguments break the rules
// of communicator.h fail together, with every member's call in the message.
#ifndef ALPA_RUNTIME_IN_PROCESS_COMMUNICATOR_H_
#define ALPA_RUNTIME_IN_PROCESS_COMMUNICATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/communicator.h"
#include "support/status.h"

namespace alpa::runtime {

struct InProcessOptions {
  // Long enough for a peer still finishing a large kernel before it reaches the collective, short
  // enough that a stuck peer is reported within seconds (issue 7 asks for under 30 s).
  double timeout_seconds = 10;
};

// The devices of one process and the rendezvous state their collectives share.
class InProcessWorld {
 public:
  explicit InProcessWorld(int64_t devices, InProcessOptions options = {});
  ~InProcessWorld();
  InProcessWorld(const InProcessWorld&) = delete;
  InProcessWorld& operator=(const InProcessWorld&) = delete;

  int64_t devices() const;
  const InProcessOptions& options() const;
  // The communicator of device `rank` (0 <= rank < devices()): to be called by that device's
  // thread only, since it counts the device's calls per group.
  Communicator& device(int64_t rank);

  struct State;  // internal to in_process_communicator.cc

 private:
  std::unique_ptr<State> state_;
};

// Runs fn(communicator of device d) on one thread per device, joins them and returns each device's
// status, indexed by rank.
std::vector<Status> RunOnDevices(InProcessWorld& world,
                                 const std::function<Status(Communicator&)>& fn);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_IN_PROCESS_COMMUNICATOR_H_
