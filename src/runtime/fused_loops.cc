#include "runtime/fused_loops.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/broadcast_folding.h"
#include "ir/loop_fusion.h"
#include "runtime/fast_kernels_internal.h"
#include "support/status.h"

namespace alpa::runtime {
namespace {

// The loop op computing `op` (ir::IsLoopOp admits exactly the opcodes mapped here), with operands
// to be filled in.
kernels::LoopOp LoopOpOf(const ir::Instruction& op) {
  kernels::LoopOp loop_op;
  loop_op.dtype = op.shape().dtype();
  if (const std::optional<kernels::UnaryFn> unary = internal::UnaryFnOf(op.opcode())) {
    loop_op.kind = kernels::LoopOp::Kind::kUnary;
    loop_op.unary = *unary;
  } else if (const std::optional<kernels::BinaryFn> binary = internal::BinaryFnOf(op.opcode())) {
    loop_op.kind = kernels::LoopOp::Kind::kBinary;
    loop_op.binary = *binary;
  } else if (op.opcode() == ir::Opcode::kCompare) {
    loop_op.kind = kernels::LoopOp::Kind::kCompare;
    loop_op.direction = op.attributes().comparison_direction;
  } else if (op.opcode() == ir::Opcode::kSelect) {
    loop_op.kind = kernels::LoopOp::Kind::kSelect;
  } else {
    ALPA_CHECK(op.opcode() == ir::Opcode::kConvert, "%{} ({}) has no loop kernel", op.name(),
               ir::OpcodeName(op.opcode()));
    loop_op.kind = kernels::LoopOp::Kind::kConvert;
  }
  return loop_op;
}

// Gathers a loop's ops in post order (operands first) and its inputs in the order the ops first
// read them.
class LoopBuilder {
 public:
  LoopBuilder(const std::unordered_set<const ir::Instruction*>& fused,
              const std::unordered_set<const ir::Instruction*>& read_in_place)
      : fused_(fused), read_in_place_(read_in_place) {}

  void VisitOps(const ir::Instruction& op) {
    if (op_index_.contains(&op)) return;  // a value its reader reads twice
    for (const ir::Instruction* operand : op.operands()) {
      if (fused_.contains(operand)) VisitOps(*operand);
    }
    op_index_.emplace(&op, static_cast<int32_t>(ops_.size()));
    ops_.push_back(&op);
  }

  FusedLoop Build(const std::vector<int64_t>& dims) {
    FusedLoop loop;
    loop.loop.dims = dims;
    const std::vector<int64_t> row_major = ir::RowMajorStrides(dims);
    std::unordered_map<const ir::Instruction*, int32_t> input_index;
    for (const ir::Instruction* op : ops_) {
      for (const ir::Instruction* operand : op->operands()) {
        if (op_index_.contains(operand) || input_index.contains(operand)) continue;
        input_index.emplace(operand, static_cast<int32_t>(loop.inputs.size()));
        const bool broadcast = read_in_place_.contains(operand);
        loop.inputs.push_back(broadcast ? operand->operand(0) : operand);
        loop.loop.inputs.push_back(
            {operand->shape().dtype(), broadcast ? ir::BroadcastReadStrides(*operand) : row_major});
      }
    }
    const int32_t input_count = static_cast<int32_t>(loop.inputs.size());
    for (const ir::Instruction* op : ops_) {
      kernels::LoopOp loop_op = LoopOpOf(*op);
      for (const ir::Instruction* operand : op->operands()) {
        const auto inside = op_index_.find(operand);
        loop_op.operands.push_back(inside != op_index_.end() ? input_count + inside->second
                                                             : input_index.at(operand));
      }
      loop.loop.ops.push_back(std::move(loop_op));
    }
    return loop;
  }

 private:
  const std::unordered_set<const ir::Instruction*>& fused_;
  const std::unordered_set<const ir::Instruction*>& read_in_place_;
  std::vector<const ir::Instruction*> ops_;
  std::unordered_map<const ir::Instruction*, int32_t> op_index_;
};

}  // namespace

bool RunsAsLoop(const ir::Instruction& instruction,
                const std::unordered_set<const ir::Instruction*>& fused,
                const std::unordered_set<const ir::Instruction*>& read_in_place) {
  return std::any_of(instruction.operands().begin(), instruction.operands().end(),
                     [&](const ir::Instruction* operand) {
                       return fused.contains(operand) || read_in_place.contains(operand);
                     });
}

FusedLoop BuildFusedLoop(const ir::Instruction& root,
                         const std::unordered_set<const ir::Instruction*>& fused,
                         const std::unordered_set<const ir::Instruction*>& read_in_place) {
  ALPA_CHECK(!fused.contains(&root) && ir::IsLoopOp(root),
             "%{} roots no loop: it is fused into its reader or no loop op", root.name());
  LoopBuilder builder(fused, read_in_place);
  builder.VisitOps(root);
  return builder.Build(root.shape().dims());
}

Result<ir::Literal> RunFusedLoop(const ir::Instruction& root, const FusedLoop& loop,
                                 const std::vector<const ir::Literal*>& inputs) {
  ir::Literal out = ir::Literal::CreateUninitialized(root.shape());
  std::vector<const void*> data;
  data.reserve(inputs.size());
  for (const ir::Literal* input : inputs) data.push_back(input->data());
  kernels::RunLoop(loop.loop, data, out.data());
  return out;
}

}  // namespace alpa::runtime
