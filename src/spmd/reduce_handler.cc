// Reduce: the local reduce of the tile over the same dimensions. Where a reduced dimension is
// split over axes A, each device holds the reduction of its tile only: a pending reduction over
// A, which the strategy all-reduces with the reduce's own reducer (partitioner.cc) or, for an
// add, hands on as a partial sum. The init value then meets every tile:
//   maximum, minimum, and, or   op(init, op(init, x)) = op(init, x): applying it per tile is
//                               applying it once, whatever it is;
//   add, multiply               it would count |A| times, so the tile at coordinate 0 along A
//                               takes it and the others the identity (0, 1):
//                                 local init = select(index over A == 0, init, identity)
//                               (a constant identity is kept as it is);
//   any other reducer           refused by name: the partitioner cannot tell how its tiles
//                               combine with an init value (the harness,
//                               tests/spmd/strategy_harness_test.cc, runs each case).
#include <fmt/format.h>

#include <optional>

#include "ir/computation.h"
#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

bool IsConstantScalar(const ir::Instruction& value, double scalar) {
  return value.opcode() == ir::Opcode::kConstant && value.shape().IsArray() &&
         value.shape().rank() == 0 && value.attributes().literal &&
         value.attributes().literal->GetDouble(0) == scalar;
}

}  // namespace

Result<ir::Instruction*> HandleReduce(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  std::vector<int64_t> axes;  // splitting the reduced dimensions
  const sharding::ShardingSpec& data = input.strategy.operands[0][0];
  for (int64_t d : original.attributes().dimensions) {
    const std::vector<int64_t>& split = data.dim_axes[static_cast<size_t>(d)];
    axes.insert(axes.end(), split.begin(), split.end());
  }
  if (s.AxesSize(axes) == 1) return EmitLocal(s, input);
  const int64_t n = original.operand_count() / 2;
  const ir::DType dtype = original.operand(0)->shape().dtype();
  const std::optional<ir::Opcode> reducer =
      n == 1 ? ir::ScalarBinaryOpcode(*original.to_apply(), dtype) : std::nullopt;
  if (reducer == ir::Opcode::kMaximum || reducer == ir::Opcode::kMinimum ||
      reducer == ir::Opcode::kAnd || reducer == ir::Opcode::kOr) {
    return EmitLocal(s, input);
  }
  if (reducer != ir::Opcode::kAdd && reducer != ir::Opcode::kMultiply) {
    return Unimplemented(
        "%{}: a reduce with reducer %{} split along a reduced dimension: the partitioner "
        "combines tiles with an init value only for add, multiply, maximum, minimum, and, or; "
        "keep its reduced dimensions whole (pin a strategy) or write it with one of those",
        original.name(), original.to_apply()->name());
  }
  const double identity = reducer == ir::Opcode::kAdd ? 0.0 : 1.0;
  if (IsConstantScalar(*original.operand(1), identity)) return EmitLocal(s, input);
  ir::Instruction* index = s.TileOffset(axes, 1);
  ir::Instruction* first = s.b().Compare(index, s.b().ConstantScalar(index->shape().dtype(), 0),
                                         ir::ComparisonDirection::kEq);
  std::vector<ir::Instruction*> operands = input.operands;
  operands[1] = s.b().Select(first, operands[1], s.b().ConstantScalar(dtype, identity));
  if (!s.b().status().ok()) return s.b().status().WithContext("%" + original.name());
  return EmitLocalWith(s, input, std::move(operands), original.attributes());
}

}  // namespace alpa::spmd
