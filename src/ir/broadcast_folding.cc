#include "ir/broadcast_folding.h"

#include <algorithm>
#include <unordered_map>

#include "ir/loop_fusion.h"

namespace alpa::ir {
namespace {

bool IsFoldableBroadcast(const Instruction& broadcast) {
  if (broadcast.opcode() != Opcode::kBroadcast) return false;
  const Shape& shape = broadcast.shape();
  // The element types loops read (kernels/fused_loop.h).
  if (!shape.IsArray() || !(IsF32F16OrBF16(shape.dtype()) || shape.dtype() == DType::kPred)) {
    return false;
  }
  const std::vector<int64_t>& mapped = broadcast.attributes().dimensions;
  if (!std::is_sorted(mapped.begin(), mapped.end()) ||
      std::adjacent_find(mapped.begin(), mapped.end()) != mapped.end()) {
    return false;
  }
  return mapped.empty() || (shape.rank() > 0 && shape.dims().back() >= kMinFoldedRow);
}

}  // namespace

std::unordered_set<const Instruction*> BroadcastsReadInPlace(const Computation& computation) {
  // Per foldable broadcast: whether every user seen so far reads it in place.
  std::unordered_map<const Instruction*, bool> all_users_fold;
  for (const std::unique_ptr<Instruction>& instruction : computation.instructions()) {
    if (IsFoldableBroadcast(*instruction) && instruction.get() != computation.root()) {
      all_users_fold.emplace(instruction.get(), false);  // until a user is seen
    }
  }
  std::unordered_set<const Instruction*> seen_user;
  for (const std::unique_ptr<Instruction>& user : computation.instructions()) {
    const bool folds = IsLoopOp(*user);
    for (const Instruction* operand : user->operands()) {
      auto it = all_users_fold.find(operand);
      if (it == all_users_fold.end()) continue;
      it->second = seen_user.insert(operand).second ? folds : it->second && folds;
    }
  }
  std::unordered_set<const Instruction*> folded;
  for (const auto& [broadcast, fold] : all_users_fold) {
    if (fold) folded.insert(broadcast);
  }
  return folded;
}

std::vector<int64_t> BroadcastReadStrides(const Instruction& broadcast) {
  const Shape& operand = broadcast.operand(0)->shape();
  std::vector<int64_t> strides(static_cast<size_t>(broadcast.shape().rank()), 0);
  int64_t stride = 1;
  const std::vector<int64_t>& mapped = broadcast.attributes().dimensions;
  for (int64_t i = operand.rank() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(mapped[static_cast<size_t>(i)])] = stride;
    stride *= operand.dim(i);
  }
  return strides;
}

}  // namespace alpa::ir
