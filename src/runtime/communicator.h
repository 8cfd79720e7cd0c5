// The communicator: collectives among the devices of a group, one interface for every engine
// (in-process threads: in_process_communicator.h; MPI ranks and NCCL later).
//
// Who calls it. Every device runs its own executor thread (or process) with its own Communicator,
// bound to that device's rank in the world (0 .. world_size - 1). A collective is a blocking call
// made by EVERY member of its group with matching arguments (the same kind, dtype, counts,
// reduction, root or pairs); it returns when this device's part is complete and its buffers may be
// reused. Calls on one group are matched in program order, like MPI and NCCL: the k-th collective a
// device makes on a group meets the k-th collective every other member makes on it.
//
// A group is a list of device ranks, e.g. one mesh axis' replica group {1, 5} of a 2x4 mesh. The
// position of a device in the list is its index in the group: all-gather places blocks, and
// reduce-scatter and all-to-all hand out blocks, in that order, and sums are taken in that order
// (so every member gets bit-identical results). A group lists distinct ranks and contains the
// caller. Roots, sources and targets are device ranks (not indices).
//
// Sizes are element counts of typed buffers; P is the group size:
//   all-reduce      input.count == output.count (any count; output may be the input: in place)
//   all-gather      output.count == P * input.count (input may be block `index` of the output)
//   reduce-scatter  input.count == P * output.count (block j of the input goes to index j)
//   all-to-all      input.count == output.count == P * m (block j of the input goes to index j;
//                   block i of the output comes from index i)
//   broadcast       the buffer, read on the root, written on every other member
//   collective-permute  input.count == output.count; each (source, target) pair sends the
//                   source's input to the target's output; a member that is no target gets zeros
//                   (XLA's semantics). Sources are distinct, targets are distinct.
//   send / recv     one message between two devices; both sides give the same count and dtype
// Buffers of different devices never overlap; apart from the in-place forms above, a device's
// input and output do not overlap either.
//
// Reductions: sum, max and min over f16, bf16, f32, f64 and the integer types. f16 and bf16
// accumulate in f32 over all members and round once, so the result is round(sum), not a chain of
// 16-bit roundings; integers wrap modulo 2^bits. Data movement works for every array dtype.
//
// Errors are values, on every member: a call that breaks the rules above, members that disagree
// (mismatched kinds, dtypes or counts), and a peer that does not arrive within the engine's timeout
// end the call with a Status naming the collective, the group and the device(s) concerned; they
// never hang or abort.
#ifndef ALPA_RUNTIME_COMMUNICATOR_H_
#define ALPA_RUNTIME_COMMUNICATOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::runtime {

enum class ReduceOp { kSum, kMax, kMin };
std::string_view ReduceOpName(ReduceOp op);  // "sum", "max", "min"

// A typed view of `count` elements of `dtype` at `data` (not owned).
struct ConstBuffer {
  ir::DType dtype = ir::DType::kF32;
  const void* data = nullptr;
  int64_t count = 0;
};
struct MutableBuffer {
  ir::DType dtype = ir::DType::kF32;
  void* data = nullptr;
  int64_t count = 0;
  operator ConstBuffer() const { return {dtype, data, count}; }  // NOLINT: a view narrows freely
};

template <typename T>
ConstBuffer ViewOf(ir::DType dtype, const std::vector<T>& values) {
  return {dtype, values.data(), static_cast<int64_t>(values.size())};
}
template <typename T>
MutableBuffer ViewOf(ir::DType dtype, std::vector<T>& values) {
  return {dtype, values.data(), static_cast<int64_t>(values.size())};
}

using DeviceGroup = std::span<const int64_t>;
using SourceTarget = std::pair<int64_t, int64_t>;  // (source rank, target rank)

// "[0, 1, 2, 3]": a group as error messages print it.
std::string GroupText(DeviceGroup group);

// Devices 0 .. world_size - 1: the group of a collective over every device of the world.
std::vector<int64_t> WorldGroup(int64_t world_size);

class Communicator {
 public:
  virtual ~Communicator() = default;

  // This device's rank and the number of devices in the world.
  virtual int64_t rank() const = 0;
  virtual int64_t world_size() const = 0;

  virtual Status AllReduce(DeviceGroup group, ReduceOp op, ConstBuffer input,
                           MutableBuffer output) = 0;
  virtual Status AllGather(DeviceGroup group, ConstBuffer input, MutableBuffer output) = 0;
  virtual Status ReduceScatter(DeviceGroup group, ReduceOp op, ConstBuffer input,
                               MutableBuffer output) = 0;
  virtual Status AllToAll(DeviceGroup group, ConstBuffer input, MutableBuffer output) = 0;
  // `buffer` is read on `root` and written on every other member.
  virtual Status Broadcast(DeviceGroup group, int64_t root, MutableBuffer buffer) = 0;
  virtual Status CollectivePermute(DeviceGroup group, std::span<const SourceTarget> pairs,
                                   ConstBuffer input, MutableBuffer output) = 0;
  // Point-to-point. Send returns once `target` has received the message (a synchronous send, so
  // two devices that both send first deadlock until the timeout; exchanges are a
  // collective-permute).
  virtual Status Send(int64_t target, ConstBuffer message) = 0;
  virtual Status Recv(int64_t source, MutableBuffer message) = 0;
  virtual Status Barrier(DeviceGroup group) = 0;
};

// Every device's `own` list of integers, on every device, by rank; the lists may differ in length.
// A collective over the world: the lengths are all-gathered, then the lists padded to the longest.
Result<std::vector<std::vector<int64_t>>> AllGatherLists(Communicator& world,
                                                         const std::vector<int64_t>& own);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_COMMUNICATOR_H_
