// Gather and scatter, in the roles of sharding/gather_scatter_strategies.h:
//   batch, batching dims  the device gathers (scatters) its own indices: the op on the tiles;
//   offset / window       a window dimension taken whole: the op on the tiles, with a gather's
//                         slice size the tile's extent (its start clamps to 0 either way);
//   vocab                 an operand dimension d that index component k addresses with window 1,
//                         split over axes A into tiles of n rows: the device holds rows
//                         [o, o + n), o = IndexOverAxes(device, A) * n, so it reads index
//                         i - o. A gather clamps an index out of [0, n) to a row it does not hold,
//                         so its result is masked to 0 there:
//                           result = select(0 <= i - o < n for every such k, gather(..., i - o), 0)
//                         and the devices' partial results sum to the whole gather. A scatter
//                         skips an update whose index is out of bounds (XLA's semantics), so each
//                         device applies exactly the updates that land in its rows.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "spmd/handlers.h"

namespace alpa::spmd {
namespace {

// The split vocab dimensions: index component k -> (operand dim, tile extent n).
struct VocabSplit {
  int64_t operand_dim;
  int64_t rows;
};

// Index component k of `indices` (its index_vector_dim removed), or the indices themselves when
// the index vector is implicit (index_vector_dim == rank).
ir::Instruction* IndexComponent(ir::ComputationBuilder& b, ir::Instruction* indices,
                                int64_t index_vector_dim, int64_t k) {
  const ir::Shape& shape = indices->shape();
  if (index_vector_dim == shape.rank()) return indices;
  std::vector<ir::SliceDim> slice;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    slice.push_back(d == index_vector_dim ? ir::SliceDim{k, k + 1, 1}
                                          : ir::SliceDim{0, shape.dim(d), 1});
    if (d != index_vector_dim) dims.push_back(shape.dim(d));
  }
  return b.Reshape(b.Slice(indices, std::move(slice)), std::move(dims));
}

// indices - o_k on every component k of `splits` (o_k its tile's first row on this device).
ir::Instruction* ShiftIndices(SpmdBuilder& s, ir::Instruction* indices, int64_t index_vector_dim,
                              const std::map<int64_t, VocabSplit>& splits,
                              const sharding::ShardingSpec& operand_spec) {
  ir::ComputationBuilder& b = s.b();
  const ir::Shape& shape = indices->shape();
  auto offset_of = [&](const VocabSplit& split) {
    return b.Convert(
        s.TileOffset(operand_spec.dim_axes[static_cast<size_t>(split.operand_dim)], split.rows),
        shape.dtype());
  };
  if (index_vector_dim == shape.rank()) {
    return b.Subtract(indices, b.Broadcast(offset_of(splits.begin()->second), shape.dims(), {}));
  }
  std::vector<ir::Instruction*> components;
  for (int64_t k = 0; k < shape.dim(index_vector_dim); ++k) {
    auto split = splits.find(k);
    ir::Instruction* offset =
        split == splits.end() ? b.ConstantScalar(shape.dtype(), 0) : offset_of(split->second);
    components.push_back(b.Reshape(offset, {1}));
  }
  ir::Instruction* offsets = b.Concatenate(std::move(components), 0);
  return b.Subtract(indices, b.Broadcast(offsets, shape.dims(), {index_vector_dim}));
}

// pred[index batch dims]: every split component of the shifted indices is in [0, n).
ir::Instruction* InRange(ir::ComputationBuilder& b, ir::Instruction* shifted,
                         int64_t index_vector_dim, const std::map<int64_t, VocabSplit>& splits) {
  ir::Instruction* all = nullptr;
  for (const auto& [k, split] : splits) {
    ir::Instruction* i = IndexComponent(b, shifted, index_vector_dim, k);
    const std::vector<int64_t>& dims = i->shape().dims();
    ir::Instruction* zero = b.Broadcast(b.ConstantScalar(i->shape().dtype(), 0), dims, {});
    ir::Instruction* rows = b.Broadcast(
        b.ConstantScalar(i->shape().dtype(), static_cast<double>(split.rows)), dims, {});
    ir::Instruction* valid =
        b.Binary(ir::Opcode::kAnd, b.Compare(i, zero, ir::ComparisonDirection::kGe),
                 b.Compare(i, rows, ir::ComparisonDirection::kLt));
    all = all == nullptr ? valid : b.Binary(ir::Opcode::kAnd, all, valid);
  }
  return all;
}

Status Refuse(const ir::Instruction& op, int64_t dim) {
  return Unimplemented(
      "%{} ({}): operand dimension {} is split in a way the partitioner does not handle (only "
      "batch, whole-window and single-row indexed dimensions)",
      op.name(), ir::OpcodeName(op.opcode()), dim);
}

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

int64_t PositionOf(const std::vector<int64_t>& list, int64_t value) {
  return static_cast<int64_t>(std::find(list.begin(), list.end(), value) - list.begin());
}

Result<ir::Instruction*> HandleGather(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& op = input.original;
  const ir::GatherDimensionNumbers& dn = *op.attributes().gather_dims;
  const sharding::ShardingSpec& operand_spec = input.strategy.operands[0][0];
  const ir::Shape& operand = op.operand(0)->shape();
  const ir::Shape& local_operand = input.operands[0]->shape();
  ir::Attributes attributes = op.attributes();
  std::map<int64_t, VocabSplit> splits;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const auto u = static_cast<size_t>(d);
    if (operand_spec.dim_axes[u].empty() || Contains(dn.operand_batching_dims, d)) continue;
    const bool window = !Contains(dn.collapsed_slice_dims, d);
    if (window && attributes.slice_sizes[u] == operand.dim(d)) {
      attributes.slice_sizes[u] = local_operand.dim(d);
    } else if (attributes.slice_sizes[u] == 1 && Contains(dn.start_index_map, d)) {
      splits[PositionOf(dn.start_index_map, d)] = VocabSplit{d, local_operand.dim(d)};
    } else {
      return Refuse(op, d);
    }
  }
  if (splits.empty()) return EmitLocalWith(s, input, input.operands, std::move(attributes));

  ir::ComputationBuilder& b = s.b();
  ir::Instruction* shifted =
      ShiftIndices(s, input.operands[1], dn.index_vector_dim, splits, operand_spec);
  ALPA_ASSIGN_OR_RETURN(ir::Instruction * gathered,
                        EmitLocalWith(s, input, {input.operands[0], shifted}, attributes));
  std::vector<int64_t> batch_dims;  // the result's dims that follow the index batch dims
  for (int64_t i = 0; i < input.local_shape.rank(); ++i) {
    if (!Contains(dn.offset_dims, i)) batch_dims.push_back(i);
  }
  ir::Instruction* mask = b.Broadcast(InRange(b, shifted, dn.index_vector_dim, splits),
                                      input.local_shape.dims(), batch_dims);
  ir::Instruction* masked = b.Select(mask, gathered, s.Zeros(input.local_shape));
  if (!b.status().ok()) return b.status().WithContext("%" + op.name());
  return masked;
}

Result<ir::Instruction*> HandleScatter(SpmdBuilder& s, const OpInput& input) {
  const ir::Instruction& op = input.original;
  const ir::ScatterDimensionNumbers& dn = *op.attributes().scatter_dims;
  const int64_t n = op.operand_count() / 2;  // inputs, then the indices, then n updates
  const sharding::ShardingSpec& input_spec = input.strategy.operands[0][0];
  const ir::Shape& update = op.operand(n + 1)->shape();
  std::map<int64_t, VocabSplit> splits;
  size_t next_window = 0;
  for (int64_t d = 0; d < op.operand(0)->shape().rank(); ++d) {
    const auto u = static_cast<size_t>(d);
    const bool window =
        !Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d);
    const int64_t extent = window ? update.dim(dn.update_window_dims[next_window++]) : 1;
    if (input_spec.dim_axes[u].empty() || Contains(dn.input_batching_dims, d)) continue;
    const bool indexed = Contains(dn.scatter_dims_to_operand_dims, d);
    if (indexed && extent == 1) {
      splits[PositionOf(dn.scatter_dims_to_operand_dims, d)] =
          VocabSplit{d, input.operands[0]->shape().dim(d)};
    } else if (indexed || !window || extent != op.operand(0)->shape().dim(d)) {
      return Refuse(op, d);
    }
  }
  if (splits.empty()) return EmitLocal(s, input);
  std::vector<ir::Instruction*> operands = input.operands;
  operands[static_cast<size_t>(n)] =
      ShiftIndices(s, operands[static_cast<size_t>(n)], dn.index_vector_dim, splits, input_spec);
  if (!s.b().status().ok()) return s.b().status().WithContext("%" + op.name());
  return EmitLocalWith(s, input, std::move(operands), op.attributes());
}

}  // namespace

Result<ir::Instruction*> HandleGatherScatter(SpmdBuilder& s, const OpInput& input) {
  return input.original.opcode() == ir::Opcode::kGather ? HandleGather(s, input)
                                                        : HandleScatter(s, input);
}

}  // namespace alpa::spmd
