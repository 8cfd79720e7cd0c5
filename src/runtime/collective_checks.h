// The rules of communicator.h that one member checks alone, before it meets its peers: shared
// by the engines so that a bad call gets the same message from each.
#ifndef ALPA_RUNTIME_COLLECTIVE_CHECKS_H_
#define ALPA_RUNTIME_COLLECTIVE_CHECKS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "runtime/communicator.h"
#include "support/status.h"

namespace alpa::runtime {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kCollectivePermute };

// A buffer of an array dtype, a non-negative count, and data unless it is empty; `role` names it.
Status CheckBuffer(ConstBuffer buffer, const char* role);

// Both buffers, the same dtype, the counts `kind` requires of a group of `members`, and for the
// reductions an op the dtype supports.
Status CheckCollectiveArguments(CollectiveKind kind, int64_t members, ConstBuffer input,
                                ConstBuffer output, std::optional<ReduceOp> op = std::nullopt);

// The index of `rank` in `group`, or why the group is not one device `rank` of `world_size` can
// call on (empty, a device out of range or listed twice, the caller missing). `label` (e.g.
// "all-reduce over devices [0, 1]") prefixes the message.
Result<int64_t> IndexInGroup(DeviceGroup group, int64_t rank, int64_t world_size,
                             const std::string& label);

// A point-to-point peer: another device of the world.
Status CheckPeer(int64_t peer, int64_t rank, int64_t world_size, const std::string& label);

// Collective-permute pairs: inside the group, distinct sources, distinct targets.
Status CheckPermutePairs(DeviceGroup group, std::span<const SourceTarget> pairs);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_COLLECTIVE_CHECKS_H_
