#include "runtime/communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

namespace alpa::runtime {

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "?";
}

std::string GroupText(DeviceGroup group) { return fmt::format("[{}]", fmt::join(group, ", ")); }

std::vector<int64_t> WorldGroup(int64_t world_size) {
  std::vector<int64_t> group(static_cast<size_t>(world_size));
  std::iota(group.begin(), group.end(), 0);
  return group;
}

Result<std::vector<std::vector<int64_t>>> AllGatherLists(Communicator& world,
                                                         const std::vector<int64_t>& own) {
  const std::vector<int64_t> everyone = WorldGroup(world.world_size());
  const std::vector<int64_t> length = {static_cast<int64_t>(own.size())};
  std::vector<int64_t> lengths(everyone.size());
  ALPA_RETURN_IF_ERROR(
      world.AllGather(everyone, ViewOf(ir::DType::kS64, length), ViewOf(ir::DType::kS64, lengths)));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> padded = own;
  padded.resize(static_cast<size_t>(longest), 0);
  std::vector<int64_t> all(padded.size() * everyone.size());
  ALPA_RETURN_IF_ERROR(
      world.AllGather(everyone, ViewOf(ir::DType::kS64, padded), ViewOf(ir::DType::kS64, all)));
  std::vector<std::vector<int64_t>> lists;
  for (size_t d = 0; d < everyone.size(); ++d) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(d * padded.size());
    lists.emplace_back(first, first + lengths[d]);
  }
  return lists;
}

}  // namespace alpa::runtime
