#include "runtime/fused_loops.h"

#include <optional>
#include <unordered_map>

#include "runtime/fast_kernels_internal.h"
#include "support/status.h"

namespace alpa::runtime {
namespace {

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

  FusedLoop Build(ir::DType dtype) {
    FusedLoop loop;
    loop.loop.dtype = dtype;
    std::unordered_map<const ir::Instruction*, int32_t> input_index;
    for (const ir::Instruction* op : ops_) {
      for (const ir::Instruction* operand : op->operands()) {
        if (op_index_.contains(operand) || input_index.contains(operand)) continue;
        input_index.emplace(operand, static_cast<int32_t>(loop.inputs.size()));
        const bool repeated = read_in_place_.contains(operand);
        loop.inputs.push_back(repeated ? operand->operand(0) : operand);
        loop.loop.repeated.push_back(repeated);
      }
    }
    const int32_t input_count = static_cast<int32_t>(loop.inputs.size());
    auto value_of = [&](const ir::Instruction* operand) {
      auto op = op_index_.find(operand);
      return op != op_index_.end() ? input_count + op->second : input_index.at(operand);
    };
    for (const ir::Instruction* op : ops_) {
      // ir::IsLoopOp admits exactly the opcodes these map.
      const std::optional<kernels::UnaryFn> unary = internal::UnaryFnOf(op->opcode());
      const std::optional<kernels::BinaryFn> binary = internal::BinaryFnOf(op->opcode());
      ALPA_CHECK(unary.has_value() || binary.has_value(), "%{} ({}) has no loop kernel", op->name(),
                 ir::OpcodeName(op->opcode()));
      kernels::LoopOp loop_op;
      loop_op.a = value_of(op->operand(0));
      if (binary) {
        loop_op.binary = true;
        loop_op.binary_fn = *binary;
        loop_op.b = value_of(op->operand(1));
      } else {
        loop_op.unary = *unary;
      }
      loop.loop.ops.push_back(loop_op);
    }
    loop.fused_values = static_cast<int32_t>(ops_.size()) - 1;
    return loop;
  }

 private:
  const std::unordered_set<const ir::Instruction*>& fused_;
  const std::unordered_set<const ir::Instruction*>& read_in_place_;
  std::vector<const ir::Instruction*> ops_;
  std::unordered_map<const ir::Instruction*, int32_t> op_index_;
};

}  // namespace

FusedLoop BuildFusedLoop(const ir::Instruction& root,
                         const std::unordered_set<const ir::Instruction*>& fused,
                         const std::unordered_set<const ir::Instruction*>& read_in_place) {
  ALPA_CHECK(!fused.contains(&root), "%{} is fused into its reader: it roots no loop", root.name());
  LoopBuilder builder(fused, read_in_place);
  builder.VisitOps(root);
  return builder.Build(root.shape().dtype());
}

Result<ir::Literal> RunFusedLoop(const ir::Instruction& root, const FusedLoop& loop,
                                 const std::vector<const ir::Literal*>& inputs) {
  ir::Literal out = ir::Literal::CreateUninitialized(root.shape());
  std::vector<const void*> data;
  data.reserve(inputs.size());
  for (const ir::Literal* input : inputs) data.push_back(input->data());
  kernels::RunLoop(loop.loop, data, out.data(), out.element_count());
  return out;
}

}  // namespace alpa::runtime
