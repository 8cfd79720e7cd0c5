// Shape ops. A broadcast or a transpose reads its operand in the layout the result implies
// (dimension mapping unchanged), so the op on the tile is the tile of the result; so does a
// reverse, whose reversed dimensions its strategies leave whole.
//
// A reshape is local when every split stays on the same block of elements. Cut both shapes into
// minimal groups of consecutive dimensions with equal products (in [a1, a2, ...] and out
// [b1, b2, ...], prod a = prod b); within a group only the most major dimension larger than 1 may
// be split, and by the same axes on both sides. Then the tile t of T along a1 is the row-major
// range [t G / T, (t + 1) G / T) of the group's G elements, and so is the tile t along b1: the
// local reshape maps the one onto the other. Anything else (a split of a minor dimension, a split
// that moves) needs data movement and is refused with Unimplemented naming the instruction.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

// The axes of the group's most major dimension larger than 1, or an error message when another
// dimension of the group is split.
std::optional<std::vector<int64_t>> GroupAxes(const std::vector<int64_t>& dims,
                                              const sharding::ShardingSpec& spec, size_t begin,
                                              size_t end) {
  std::vector<int64_t> axes;
  bool found = false;
  for (size_t d = begin; d < end; ++d) {
    const std::vector<int64_t>& dim_axes = spec.dim_axes[d];
    if (!found && dims[d] > 1) {
      found = true;
      axes = dim_axes;
    } else if (!dim_axes.empty()) {
      return std::nullopt;
    }
  }
  return axes;
}

Status CheckLocalReshape(const ir::Instruction& reshape, const sharding::ShardingSpec& in,
                         const sharding::ShardingSpec& out) {
  const std::vector<int64_t>& a = reshape.operand(0)->shape().dims();
  const std::vector<int64_t>& b = reshape.shape().dims();
  auto refuse = [&](const std::string& why) {
    return Unimplemented("%{} (reshape {} -> {}): {} -> {} is not a local reshape ({})",
                         reshape.name(), fmt::join(a, "x"), fmt::join(b, "x"),
                         sharding::ToString(in), sharding::ToString(out), why);
  };
  if (in.partial_axes != out.partial_axes) return refuse("the partial axes differ");
  for (int64_t n : a) {
    if (n == 0) return refuse("an empty dimension");
  }
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pa = 1, pb = 1;
    if (i < a.size()) pa *= a[i++];
    if (j < b.size()) pb *= b[j++];
    while (pa != pb) {
      if (pa < pb && i < a.size()) {
        pa *= a[i++];
      } else if (pb < pa && j < b.size()) {
        pb *= b[j++];
      } else {
        return refuse("the shapes do not factor");
      }
    }
    const auto in_axes = GroupAxes(a, in, i0, i);
    const auto out_axes = GroupAxes(b, out, j0, j);
    if (!in_axes || !out_axes) return refuse("a dimension other than a group's major one is split");
    if (*in_axes != *out_axes) return refuse("a split moves to another group or axis order");
  }
  return Status::Ok();
}

}  // namespace

Result<ir::Instruction*> HandleShape(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& original = input.original;
  if (original.opcode() == ir::Opcode::kReshape) {
    ALPA_RETURN_IF_ERROR(
        CheckLocalReshape(original, input.strategy.operands[0][0], input.output[0]));
  }
  return EmitLocal(s, input);
}

}  // namespace alpa::spmd
