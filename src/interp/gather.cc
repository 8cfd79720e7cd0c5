// gather, with XLA's dimension numbers including batching dims.
//
// For result index R: the batch coordinates G are R at the dims not in offset_dims; they index
// start_indices (with index_vector_dim, possibly the implicit trailing dim, left out). The start
// vector S[k] = start_indices[G, k at index_vector_dim] is placed at operand dim
// start_index_map[k]; operand_batching_dims[i] takes G's coordinate along start_indices dim
// start_indices_batching_dims[i]. Starts are clamped to [0, operand_dim - slice_size]. The offset
// dims of R give, in order, the coordinates of the operand dims that are neither collapsed nor
// batching. The element read is operand[start + offset].
#include <algorithm>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

Result<Literal> EvaluateGather(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const ir::Shape& shape = instruction.shape();
  if (!instruction.attributes().gather_dims.has_value()) {
    return InvalidArgument("gather has no dimension numbers");
  }
  const ir::GatherDimensionNumbers& dn = *instruction.attributes().gather_dims;
  const std::vector<int64_t>& slice_sizes = instruction.attributes().slice_sizes;
  const int64_t operand_rank = operand.shape().rank();
  const int64_t indices_rank = indices.shape().rank();
  if (!ir::IsInteger(indices.shape().dtype()) || !shape.IsArray() ||
      shape.dtype() != operand.shape().dtype() ||
      static_cast<int64_t>(slice_sizes.size()) != operand_rank || dn.index_vector_dim < 0 ||
      dn.index_vector_dim > indices_rank ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return InvalidArgument(
        "gather of {} with indices {} into {}: inconsistent shapes or "
        "dimension numbers",
        operand.shape().ToString(false), indices.shape().ToString(false), shape.ToString(false));
  }
  const int64_t index_vector_size =
      dn.index_vector_dim == indices_rank ? 1 : indices.shape().dim(dn.index_vector_dim);
  if (static_cast<int64_t>(dn.start_index_map.size()) != index_vector_size) {
    return InvalidArgument("start_index_map has {} entries, the index vector {}",
                           dn.start_index_map.size(), index_vector_size);
  }
  for (int64_t d : dn.start_index_map) {
    if (d < 0 || d >= operand_rank) return InvalidArgument("start_index_map entry {}", d);
  }
  for (size_t i = 0; i < slice_sizes.size(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.shape().dims()[i]) {
      return InvalidArgument("slice size {} exceeds operand dimension {}", slice_sizes[i], i);
    }
  }
  // A collapsed or batching dim has no offset dim to hold more than one element (XLA).
  for (const std::vector<int64_t>* dims : {&dn.collapsed_slice_dims, &dn.operand_batching_dims}) {
    for (int64_t d : *dims) {
      if (d < 0 || d >= operand_rank || slice_sizes[static_cast<size_t>(d)] != 1) {
        return InvalidArgument("collapsed or batching dim {} needs slice size 1", d);
      }
    }
  }
  for (int64_t d : dn.offset_dims) {
    if (d < 0 || d >= shape.rank()) return InvalidArgument("offset dim {} out of range", d);
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t od = dn.operand_batching_dims[i];
    const int64_t id = dn.start_indices_batching_dims[i];
    if (od < 0 || od >= operand_rank || id < 0 || id >= indices_rank || id == dn.index_vector_dim ||
        operand.shape().dim(od) != indices.shape().dim(id)) {
      return InvalidArgument("batching dims {} (operand) and {} (start_indices) do not match", od,
                             id);
    }
  }
  // Result batch dims -> start_indices dims (all but index_vector_dim), in order.
  std::vector<int64_t> batch_result_dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!Contains(dn.offset_dims, d)) batch_result_dims.push_back(d);
  }
  std::vector<int64_t> indices_batch_dims;
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != dn.index_vector_dim) indices_batch_dims.push_back(d);
  }
  // Operand dims addressed by the offset dims, in order.
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (batch_result_dims.size() != indices_batch_dims.size() ||
      window_operand_dims.size() != dn.offset_dims.size()) {
    return InvalidArgument("result rank {} does not match the batch and offset dims", shape.rank());
  }
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    if (shape.dim(dn.offset_dims[j]) != slice_sizes[static_cast<size_t>(window_operand_dims[j])]) {
      return InvalidArgument("offset dim {} has size {}, slice size is {}", dn.offset_dims[j],
                             shape.dim(dn.offset_dims[j]),
                             slice_sizes[static_cast<size_t>(window_operand_dims[j])]);
    }
  }
  for (size_t j = 0; j < batch_result_dims.size(); ++j) {
    if (shape.dim(batch_result_dims[j]) != indices.shape().dim(indices_batch_dims[j])) {
      return InvalidArgument("batch dim {} has size {}, start_indices dim {} has {}",
                             batch_result_dims[j], shape.dim(batch_result_dims[j]),
                             indices_batch_dims[j], indices.shape().dim(indices_batch_dims[j]));
    }
  }
  Literal out = Literal::CreateZeros(shape);
  if (out.element_count() == 0) return out;
  const std::vector<int64_t> operand_strides = ir::RowMajorStrides(operand.shape().dims());
  const std::vector<int64_t> indices_strides = ir::RowMajorStrides(indices.shape().dims());
  const int64_t vector_stride = dn.index_vector_dim == indices_rank
                                    ? 0
                                    : indices_strides[static_cast<size_t>(dn.index_vector_dim)];
  std::vector<int64_t> r(static_cast<size_t>(shape.rank()), 0);
  std::vector<int64_t> start(static_cast<size_t>(operand_rank), 0);
  int64_t out_linear = 0;
  do {
    // Position of the index vector in start_indices.
    int64_t base = 0;
    for (size_t j = 0; j < batch_result_dims.size(); ++j) {
      base += r[static_cast<size_t>(batch_result_dims[j])] *
              indices_strides[static_cast<size_t>(indices_batch_dims[j])];
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
      const size_t d = static_cast<size_t>(dn.start_index_map[k]);
      const int64_t value = indices.GetInt(base + static_cast<int64_t>(k) * vector_stride);
      start[d] = std::clamp<int64_t>(value, 0, operand.shape().dims()[d] - slice_sizes[d]);
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      // The result batch dim that is start_indices dim start_indices_batching_dims[i].
      const auto it = std::find(indices_batch_dims.begin(), indices_batch_dims.end(),
                                dn.start_indices_batching_dims[i]);
      start[static_cast<size_t>(dn.operand_batching_dims[i])] = r[static_cast<size_t>(
          batch_result_dims[static_cast<size_t>(it - indices_batch_dims.begin())])];
    }
    int64_t source = Dot(start, operand_strides);
    for (size_t j = 0; j < window_operand_dims.size(); ++j) {
      source += r[static_cast<size_t>(dn.offset_dims[j])] *
                operand_strides[static_cast<size_t>(window_operand_dims[j])];
    }
    CopyElement(operand, source, out, out_linear++);
  } while (NextIndex(r, shape.dims()));
  return out;
}

}  // namespace alpa::interp::internal
