// The device an SPMD program is evaluated on, and the engine that runs its collectives.
//
// XLA's SPMD partitioner emits one module that every device runs: shapes are local (per device),
// partition-id tells a device where it sits, and cross-device collectives name the devices they
// join. EvaluateModule with a DeviceContext runs that module as one of `num_partitions` devices;
// the multi-participant collectives go to a CollectiveBackend (the runtime's communicators
// implement it), so the interpreter itself knows nothing of threads or processes.
//
// Device ids. The devices are numbered 0 .. num_partitions - 1, and every replica group (explicit
// `{{0,1},{2,3}}` or iota `[2,2]<=[4]`) names device ids, whatever channel_id and
// use_global_device_ids say. XLA reads the groups in three modes: replica ids (no channel_id),
// partition ids (channel_id) and flattened ids replica * num_partitions + partition
// (channel_id, use_global_device_ids=true). With one replica, which is what the SPMD partitioner
// targets, the last two are the partition id, and we read the first the same way so that
// hand-written programs without channel ids run too. Empty or absent replica_groups mean one
// group of all devices. replica-id is `replica_id` (0 for SPMD programs).
#ifndef ALPA_INTERP_DEVICE_CONTEXT_H_
#define ALPA_INTERP_DEVICE_CONTEXT_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "ir/literal.h"
#include "support/status.h"

namespace alpa::interp {

// The reductions the collectives support: the reducer computation (to_apply) of an all-reduce or
// reduce-scatter must be add, maximum or minimum of its two parameters.
enum class CollectiveReduction { kSum, kMax, kMin };
std::string_view CollectiveReductionName(CollectiveReduction reduction);  // "sum", "max", "min"

// Device ids of one group, in group order (the order blocks are gathered and scattered in).
using CollectiveGroup = std::span<const int64_t>;
using SourceTargetPair = std::pair<int64_t, int64_t>;  // (source device, target device)

// Moves data between the devices of a group. Literals are arrays; the backend sees only their
// row-major elements, in blocks, and the interpreter maps blocks to dimensions. With P members,
// n = input elements, the output literal is allocated by the caller with the element count below:
//   AllReduce          output n: the reduction of every member's input, element by element.
//   AllGather          output P * n: block i is member i's input.
//   ReduceScatter      output n / P: the reduction of block `index` of every member's input.
//   AllToAll           output n: block i comes from block `index` of member i's input.
//   CollectivePermute  output n: the input of the source whose target is this device, zeros
//                      when none is (XLA). `group` lists every device of the program.
//   Broadcast          output n: the input of `root` (a device id of the group).
// Every member of a group makes the same calls in the same order (the SPMD program guarantees
// it); a backend reports disagreement, or a member that never arrives, as an error, not a hang.
class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual Status AllReduce(CollectiveGroup group, CollectiveReduction reduction,
                           const ir::Literal& input, ir::Literal& output) = 0;
  virtual Status AllGather(CollectiveGroup group, const ir::Literal& input,
                           ir::Literal& output) = 0;
  virtual Status ReduceScatter(CollectiveGroup group, CollectiveReduction reduction,
                               const ir::Literal& input, ir::Literal& output) = 0;
  virtual Status AllToAll(CollectiveGroup group, const ir::Literal& input, ir::Literal& output) = 0;
  virtual Status CollectivePermute(CollectiveGroup group, std::span<const SourceTargetPair> pairs,
                                   const ir::Literal& input, ir::Literal& output) = 0;
  virtual Status Broadcast(CollectiveGroup group, int64_t root, const ir::Literal& input,
                           ir::Literal& output) = 0;
};

struct DeviceContext {
  int64_t partition_id = 0;
  int64_t num_partitions = 1;
  int64_t replica_id = 0;
  // Needed as soon as a collective has more than one participant; not owned.
  CollectiveBackend* collectives = nullptr;
};

}  // namespace alpa::interp

#endif  // ALPA_INTERP_DEVICE_CONTEXT_H_
