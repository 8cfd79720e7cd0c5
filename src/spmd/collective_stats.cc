#include "spmd/collective_stats.h"

#include <fmt/format.h>

#include <optional>

namespace alpa::spmd {
namespace {

// The kind of a collective opcode and whether its size is its result (else its operand).
std::optional<std::pair<cost::CollectiveKind, bool>> KindOf(ir::Opcode opcode) {
  switch (opcode) {
    case ir::Opcode::kAllReduce:
      return {{cost::CollectiveKind::kAllReduce, false}};
    case ir::Opcode::kAllGather:
      return {{cost::CollectiveKind::kAllGather, true}};
    case ir::Opcode::kReduceScatter:
      return {{cost::CollectiveKind::kReduceScatter, false}};
    case ir::Opcode::kAllToAll:
      return {{cost::CollectiveKind::kAllToAll, false}};
    case ir::Opcode::kCollectivePermute:
      return {{cost::CollectiveKind::kCollectivePermute, false}};
    default:
      return std::nullopt;
  }
}

}  // namespace

CollectiveStats CountCollectives(const ir::Computation& computation) {
  CollectiveStats stats;
  for (const auto& instruction : computation.instructions()) {
    const auto kind = KindOf(instruction->opcode());
    if (!kind.has_value()) continue;
    ++stats.count[kind->first];
    if (kind->second) {
      stats.bytes += instruction->shape().ByteSize();
    } else {
      for (const ir::Instruction* operand : instruction->operands()) {
        stats.bytes += operand->shape().ByteSize();
      }
    }
  }
  return stats;
}

std::string ToString(const CollectiveStats& stats) {
  std::string text;
  for (const auto& [kind, count] : stats.count) {
    text +=
        fmt::format("{}{} x{}", text.empty() ? "" : ", ", cost::CollectiveKindName(kind), count);
  }
  return fmt::format("{}; {} B", text.empty() ? "none" : text, stats.bytes);
}

}  // namespace alpa::spmd
