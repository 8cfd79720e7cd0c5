// dynamic-slice and dynamic-update-slice.
//
// XLA clamps each start index so the window stays inside the operand:
//   start_d = clamp(index_d, 0, operand_dim_d - window_dim_d)
// so out-of-range starts never fail; they move the window back inside.
#include <algorithm>
#include <cstring>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// Reads the scalar start indices operands[first..] and clamps them for a window of `window`.
Result<std::vector<int64_t>> ClampedStarts(const Operands& operands, size_t first,
                                           const std::vector<int64_t>& operand_dims,
                                           const std::vector<int64_t>& window) {
  if (operands.size() - first != operand_dims.size()) {
    return InvalidArgument("expects {} start indices (one per operand dimension), has {}",
                           operand_dims.size(), operands.size() - first);
  }
  std::vector<int64_t> starts(operand_dims.size());
  for (size_t d = 0; d < operand_dims.size(); ++d) {
    const Literal& index = *operands[first + d];
    if (index.shape().rank() != 0 || !ir::IsInteger(index.shape().dtype())) {
      return InvalidArgument("start index {} has shape {}, expected an integer scalar", d,
                             index.shape().ToString(false));
    }
    if (window[d] < 0 || window[d] > operand_dims[d]) {
      return InvalidArgument("window size {} does not fit dimension {} of size {}", window[d], d,
                             operand_dims[d]);
    }
    int64_t value = ScalarIndex(index);
    // A u64 index above 2^63 reads as negative; it is a huge index, clamped to the far end.
    if (value < 0 && ir::IsUnsignedInteger(index.shape().dtype())) {
      value = operand_dims[d];
    }
    starts[d] = std::clamp<int64_t>(value, 0, operand_dims[d] - window[d]);
  }
  return starts;
}

// Calls fn(big_offset, small_offset, count) for each contiguous row of the box of `small_dims`
// elements placed at `starts` inside an array of `big_dims` (offsets in elements, row-major).
template <typename Fn>
void ForEachBoxRow(const std::vector<int64_t>& big_dims, const std::vector<int64_t>& small_dims,
                   const std::vector<int64_t>& starts, Fn fn) {
  int64_t count = 1;
  for (int64_t d : small_dims) count *= d;
  if (count == 0) return;
  const std::vector<int64_t> big_strides = ir::RowMajorStrides(big_dims);
  const int64_t row = small_dims.empty() ? 1 : small_dims.back();
  const std::vector<int64_t> outer(small_dims.begin(),
                                   small_dims.end() - (small_dims.empty() ? 0 : 1));
  std::vector<int64_t> index(outer.size(), 0);
  int64_t small_offset = 0;
  do {
    int64_t big_offset = 0;
    for (size_t d = 0; d < small_dims.size(); ++d) {
      big_offset += (starts[d] + (d < index.size() ? index[d] : 0)) * big_strides[d];
    }
    fn(big_offset, small_offset, row);
    small_offset += row;
  } while (NextIndex(index, outer));
}

}  // namespace

Result<Literal> EvaluateDynamicSlice(const ir::Instruction& instruction, const Operands& operands) {
  if (operands.empty()) return InvalidArgument("dynamic-slice needs an operand");
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const ir::Shape& shape = instruction.shape();
  const std::vector<int64_t>& sizes = instruction.attributes().slice_sizes;
  if (!shape.IsArray() || shape.dtype() != in.shape().dtype() || shape.dims() != sizes) {
    return InvalidArgument("result {} must be the operand's type with dims dynamic_slice_sizes",
                           shape.ToString(false));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(operands, 1, in.shape().dims(), sizes));
  Literal out = Literal::CreateZeros(shape);
  const int64_t size = ir::DTypeByteSize(shape.dtype());
  ForEachBoxRow(in.shape().dims(), sizes, starts, [&](int64_t big, int64_t small, int64_t n) {
    std::memcpy(out.data() + small * size, in.data() + big * size, static_cast<size_t>(n * size));
  });
  return out;
}

Result<Literal> EvaluateDynamicUpdateSlice(const ir::Instruction& instruction,
                                           const Operands& operands) {
  if (operands.size() < 2) return InvalidArgument("dynamic-update-slice needs operand and update");
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const Literal& update = *operands[1];
  if (!instruction.shape().Compatible(in.shape()) ||
      update.shape().dtype() != in.shape().dtype() ||
      update.shape().rank() != in.shape().rank()) {
    return InvalidArgument("update {} must have the operand's type and rank ({})",
                           update.shape().ToString(false), in.shape().ToString(false));
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(operands, 2, in.shape().dims(), update.shape().dims()));
  Literal out = in;
  const int64_t size = ir::DTypeByteSize(in.shape().dtype());
  ForEachBoxRow(in.shape().dims(), update.shape().dims(), starts,
                [&](int64_t big, int64_t small, int64_t n) {
                  std::memcpy(out.data() + big * size, update.data() + small * size,
                              static_cast<size_t>(n * size));
                });
  return out;
}

}  // namespace alpa::interp::internal
