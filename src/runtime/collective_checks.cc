#include "runtime/collective_checks.h"

#include <algorithm>

#include "runtime/reduce_buffers.h"

namespace alpa::runtime {

Status CheckBuffer(ConstBuffer buffer, const char* role) {
  if (!ir::IsArrayDType(buffer.dtype)) {
    return InvalidArgument("the {} has element type {}, which holds no data", role,
                           ir::DTypeName(buffer.dtype));
  }
  if (buffer.count < 0) return InvalidArgument("the {} has {} elements", role, buffer.count);
  if (buffer.count > 0 && buffer.data == nullptr) {
    return InvalidArgument("the {} of {} elements is a null pointer", role, buffer.count);
  }
  return Status::Ok();
}

Status CheckCollectiveArguments(CollectiveKind kind, int64_t members, ConstBuffer input,
                                ConstBuffer output, std::optional<ReduceOp> op) {
  ALPA_RETURN_IF_ERROR(CheckBuffer(input, "input"));
  ALPA_RETURN_IF_ERROR(CheckBuffer(output, "output"));
  if (input.dtype != output.dtype) {
    return InvalidArgument("input is {} but output is {}", ir::DTypeName(input.dtype),
                           ir::DTypeName(output.dtype));
  }
  switch (kind) {
    case CollectiveKind::kAllGather:
      if (output.count != members * input.count) {
        return InvalidArgument("output has {} elements; {} blocks of the input's {} are {}",
                               output.count, members, input.count, members * input.count);
      }
      break;
    case CollectiveKind::kReduceScatter:
      if (input.count != members * output.count) {
        return InvalidArgument(
            "input of {} elements does not split into {} blocks of the output's {} elements",
            input.count, members, output.count);
      }
      break;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kCollectivePermute:
      if (input.count != output.count) {
        return InvalidArgument("input has {} elements but output has {}", input.count,
                               output.count);
      }
      if (kind == CollectiveKind::kAllToAll && input.count % members != 0) {
        return InvalidArgument(
            "{} elements do not split into {} equal blocks; all-to-all needs a count divisible "
            "by the group size",
            input.count, members);
      }
      break;
  }
  if (op.has_value()) return CheckReduction(input.dtype, *op);
  return Status::Ok();
}

Result<int64_t> IndexInGroup(DeviceGroup group, int64_t rank, int64_t world_size,
                             const std::string& label) {
  if (group.empty()) return InvalidArgument("{}: the group is empty", label);
  int64_t index = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= world_size) {
      return InvalidArgument("{}: device {} is not one of the {} devices", label, group[i],
                             world_size);
    }
    if (std::find(group.begin(), group.begin() + i, group[i]) != group.begin() + i) {
      return InvalidArgument("{}: device {} is listed twice", label, group[i]);
    }
    if (group[i] == rank) index = static_cast<int64_t>(i);
  }
  if (index < 0) {
    return InvalidArgument("{}: called on device {}, which is not in the group", label, rank);
  }
  return index;
}

Status CheckPeer(int64_t peer, int64_t rank, int64_t world_size, const std::string& label) {
  if (peer < 0 || peer >= world_size) {
    return InvalidArgument("{}: device {} is not one of the {} devices", label, peer, world_size);
  }
  if (peer == rank) return InvalidArgument("{}: a device cannot message itself", label);
  return Status::Ok();
}

Status CheckPermutePairs(DeviceGroup group, std::span<const SourceTarget> pairs) {
  auto in_group = [&](int64_t rank) {
    return std::find(group.begin(), group.end(), rank) != group.end();
  };
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [source, target] = pairs[i];
    if (!in_group(source) || !in_group(target)) {
      return InvalidArgument("pair {}->{} names a device outside the group", source, target);
    }
    for (size_t j = 0; j < i; ++j) {
      if (pairs[j].first == source) return InvalidArgument("device {} sends twice", source);
      if (pairs[j].second == target) return InvalidArgument("device {} receives twice", target);
    }
  }
  return Status::Ok();
}

}  // namespace alpa::runtime
