// Shape rules of gather and scatter, after XLA's GatherDimensionNumbers/ScatterDimensionNumbers
// (https://openxla.org/xla/operation_semantics#gather).
//
// Indices with index_vector_dim == rank have an implicit trailing dimension of size 1: s32[5]
// with index_vector_dim=1 reads as s32[5,1]. The "batch dims" of the indices are all their
// (expanded) dimensions except index_vector_dim.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The indices' dims with the implicit trailing 1 made explicit.
Result<std::vector<int64_t>> ExpandedIndexDims(const Instruction& instruction, const Shape& indices,
                                               int64_t index_vector_dim) {
  if (!IsInteger(indices.dtype())) {
    return RuleError(instruction, "indices {} must have an integer element type", Str(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return RuleError(instruction, "index_vector_dim {} is out of range [0, {}]", index_vector_dim,
                     indices.rank());
  }
  std::vector<int64_t> dims = indices.dims();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// The index-to-operand map, window dims and batching dims, which gather and scatter share:
//   index_map (start_index_map / scatter_dims_to_operand_dims): one operand dim per index
//     vector entry, in range, unique, not a batching dim;
//   removed (collapsed_slice_dims / inserted_window_dims) and operand batching dims: sorted,
//     unique, in range, disjoint;
//   index batching dims: pair up with operand batching dims, same sizes, not index_vector_dim.
struct IndexingDims {
  std::string_view index_map_name;
  const std::vector<int64_t>& index_map;
  std::string_view removed_name;
  const std::vector<int64_t>& removed;
  const std::vector<int64_t>& operand_batching;
  const std::vector<int64_t>& index_batching;
  int64_t index_vector_dim;
};

Status CheckIndexingDims(const Instruction& instruction, const IndexingDims& d,
                         const Shape& operand, const std::vector<int64_t>& index_dims) {
  const int64_t vector_size = index_dims[static_cast<size_t>(d.index_vector_dim)];
  if (static_cast<int64_t>(d.index_map.size()) != vector_size) {
    return RuleError(instruction, "{} has {} entries but the index vector has size {}",
                     d.index_map_name, d.index_map.size(), vector_size);
  }
  ALPA_RETURN_IF_ERROR(
      CheckDimensionList(instruction, d.index_map_name, d.index_map, operand.rank()));
  ALPA_RETURN_IF_ERROR(
      CheckDimensionList(instruction, d.removed_name, d.removed, operand.rank(), /*sorted=*/true));
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "operand batching dims", d.operand_batching,
                                          operand.rank(), /*sorted=*/true));
  for (int64_t dim : d.operand_batching) {
    if (Contains(d.removed, dim) || Contains(d.index_map, dim)) {
      return RuleError(instruction, "operand batching dim {} also appears in {} or {}", dim,
                       d.removed_name, d.index_map_name);
    }
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "indices batching dims", d.index_batching,
                                          static_cast<int64_t>(index_dims.size())));
  if (d.index_batching.size() != d.operand_batching.size()) {
    return RuleError(instruction, "has {} operand batching dims but {} indices batching dims",
                     d.operand_batching.size(), d.index_batching.size());
  }
  for (size_t i = 0; i < d.index_batching.size(); ++i) {
    const int64_t index_dim = d.index_batching[i];
    const int64_t operand_dim = d.operand_batching[i];
    if (index_dim == d.index_vector_dim) {
      return RuleError(instruction, "indices batching dim {} is the index_vector_dim", index_dim);
    }
    if (index_dims[static_cast<size_t>(index_dim)] != operand.dim(operand_dim)) {
      return RuleError(
          instruction,
          "indices batching dim {} has size {} but operand batching dim {} has size {}", index_dim,
          index_dims[static_cast<size_t>(index_dim)], operand_dim, operand.dim(operand_dim));
    }
  }
  return Status::Ok();
}

// The expanded index dims without index_vector_dim.
std::vector<int64_t> IndexBatchDims(const std::vector<int64_t>& index_dims, int64_t vector_dim) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < index_dims.size(); ++i) {
    if (static_cast<int64_t>(i) != vector_dim) dims.push_back(index_dims[i]);
  }
  return dims;
}

}  // namespace

// gather(operand, start_indices): output rank = |offset_dims| + |index batch dims|; output
// dimension i is the next slice size (skipping collapsed and operand batching dims) when i is in
// offset_dims, else the next index batch dim.
Result<Shape> InferGatherShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Attributes& attributes = instruction.attributes();
  if (!attributes.gather_dims.has_value()) {
    return RuleError(instruction, "has no gather dimension numbers");
  }
  const GatherDimensionNumbers& dn = *attributes.gather_dims;
  const Shape& operand = OperandShape(instruction, 0);
  ALPA_ASSIGN_OR_RETURN(
      std::vector<int64_t> index_dims,
      ExpandedIndexDims(instruction, OperandShape(instruction, 1), dn.index_vector_dim));
  ALPA_RETURN_IF_ERROR(CheckIndexingDims(
      instruction,
      {"start_index_map", dn.start_index_map, "collapsed_slice_dims", dn.collapsed_slice_dims,
       dn.operand_batching_dims, dn.start_indices_batching_dims, dn.index_vector_dim},
      operand, index_dims));
  const std::vector<int64_t>& slice_sizes = attributes.slice_sizes;
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return RuleError(instruction, "slice_sizes has {} entries but the operand {} has rank {}",
                     slice_sizes.size(), Str(operand), operand.rank());
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = slice_sizes[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dim(i)) {
      return RuleError(instruction, "slice size {} of operand dimension {} is out of range [0, {}]",
                       size, i, operand.dim(i));
    }
    const bool removed =
        Contains(dn.collapsed_slice_dims, i) || Contains(dn.operand_batching_dims, i);
    if (removed && size > 1) {
      return RuleError(instruction,
                       "collapsed or batching operand dimension {} must have slice size <= 1 but "
                       "has {}",
                       i, size);
    }
    if (!removed) offset_sizes.push_back(size);
  }
  const std::vector<int64_t> batch_dims = IndexBatchDims(index_dims, dn.index_vector_dim);
  const int64_t output_rank =
      static_cast<int64_t>(dn.offset_dims.size()) + static_cast<int64_t>(batch_dims.size());
  if (dn.offset_dims.size() != offset_sizes.size()) {
    return RuleError(instruction,
                     "offset_dims has {} entries but operand rank {} minus collapsed and batching "
                     "dims leaves {}",
                     dn.offset_dims.size(), operand.rank(), offset_sizes.size());
  }
  ALPA_RETURN_IF_ERROR(
      CheckDimensionList(instruction, "offset_dims", dn.offset_dims, output_rank, /*sorted=*/true));
  std::vector<int64_t> dims;
  size_t next_offset = 0;
  size_t next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    dims.push_back(Contains(dn.offset_dims, i) ? offset_sizes[next_offset++]
                                               : batch_dims[next_batch++]);
  }
  return Shape::Array(operand.dtype(), std::move(dims));
}

// scatter(inputs..., scatter_indices, updates...): N inputs of equal dims, N updates whose
// scatter dims (those not in update_window_dims) are the index batch dims in order and whose
// window dims fit in the operand's non-inserted, non-batching dims. Result: the inputs' shapes.
Result<Shape> InferScatterShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 3));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  if (instruction.operand_count() % 2 != 1) {
    return RuleError(instruction, "expects N inputs, the indices and N updates but has {} operands",
                     instruction.operand_count());
  }
  const Attributes& attributes = instruction.attributes();
  if (!attributes.scatter_dims.has_value()) {
    return RuleError(instruction, "has no scatter dimension numbers");
  }
  const ScatterDimensionNumbers& dn = *attributes.scatter_dims;
  const int64_t n = instruction.operand_count() / 2;
  const Shape& operand = OperandShape(instruction, 0);
  ALPA_ASSIGN_OR_RETURN(
      std::vector<int64_t> index_dims,
      ExpandedIndexDims(instruction, OperandShape(instruction, n), dn.index_vector_dim));
  ALPA_RETURN_IF_ERROR(
      CheckIndexingDims(instruction,
                        {"scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims,
                         "inserted_window_dims", dn.inserted_window_dims, dn.input_batching_dims,
                         dn.scatter_indices_batching_dims, dn.index_vector_dim},
                        operand, index_dims));
  const std::vector<int64_t> batch_dims = IndexBatchDims(index_dims, dn.index_vector_dim);
  const int64_t window_rank = static_cast<int64_t>(dn.update_window_dims.size());
  const int64_t update_rank = window_rank + static_cast<int64_t>(batch_dims.size());
  if (window_rank +
          static_cast<int64_t>(dn.inserted_window_dims.size() + dn.input_batching_dims.size()) !=
      operand.rank()) {
    return RuleError(instruction,
                     "update_window_dims ({}) + inserted_window_dims ({}) + input_batching_dims "
                     "({}) must equal the operand rank {}",
                     window_rank, dn.inserted_window_dims.size(), dn.input_batching_dims.size(),
                     operand.rank());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "update_window_dims", dn.update_window_dims,
                                          update_rank, /*sorted=*/true));
  // Operand dims that the update window spans, in order.
  std::vector<int64_t> window_operand_dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!Contains(dn.inserted_window_dims, i) && !Contains(dn.input_batching_dims, i)) {
      window_operand_dims.push_back(i);
    }
  }
  std::vector<DType> types;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& input = OperandShape(instruction, k);
    const Shape& update = OperandShape(instruction, n + 1 + k);
    if (input.dims() != operand.dims()) {
      return RuleError(instruction, "inputs must have equal dimensions but have shapes {} and {}",
                       Str(operand), Str(input));
    }
    if (update.dtype() != input.dtype() || update.rank() != update_rank) {
      return RuleError(instruction,
                       "update {} {} must have rank {} and the element type of input {}", k,
                       Str(update), update_rank, Str(input));
    }
    size_t next_window = 0;
    size_t next_batch = 0;
    for (int64_t i = 0; i < update_rank; ++i) {
      if (Contains(dn.update_window_dims, i)) {
        const int64_t operand_dim = window_operand_dims[next_window++];
        if (update.dim(i) > operand.dim(operand_dim)) {
          return RuleError(instruction,
                           "update window dimension {} has size {} but operand dimension {} has "
                           "only {}",
                           i, update.dim(i), operand_dim, operand.dim(operand_dim));
        }
      } else if (update.dim(i) != batch_dims[next_batch++]) {
        return RuleError(instruction,
                         "update scatter dimension {} has size {} but the indices' batch "
                         "dimensions are {{{}}}",
                         i, update.dim(i), fmt::join(batch_dims, ","));
      }
    }
    types.push_back(input.dtype());
  }
  ALPA_RETURN_IF_ERROR(CheckReducer(instruction, 0, types, types));
  std::vector<Shape> results;
  for (int64_t k = 0; k < n; ++k) results.push_back(OperandShape(instruction, k));
  return ArrayOrTuple(std::move(results));
}

}  // namespace alpa::ir::shape_inference_internal
