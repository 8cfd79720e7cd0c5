// scatter (variadic), with XLA's dimension numbers including batching dims.
//
// For update index U: the scatter coordinates G are U at the dims not in update_window_dims; they
// index scatter_indices (index_vector_dim left out, possibly the implicit trailing dim). The start
// vector S[k] = scatter_indices[G, k at index_vector_dim] goes to operand dim
// scatter_dims_to_operand_dims[k]; input_batching_dims[i] takes G's coordinate along
// scatter_indices dim scatter_indices_batching_dims[i]. The window dims of U give, in order, the
// coordinates of operand dims that are neither inserted nor batching. Then
//   operand[start + window] = update_computation(operand[...], updates[U])   (all N at once)
// in row-major order of U. As in XLA's scatter expander, a window whose start is not in
// [0, operand_dim - window_size] in every dim is skipped entirely (no clamping, unlike gather).
#include <algorithm>
#include <utility>

#include "interp/computation_call.h"
#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// The geometry of one scatter, checked.
struct ScatterGeometry {
  std::vector<int64_t> scatter_update_dims;  // update dims not in update_window_dims
  std::vector<int64_t> indices_batch_dims;   // scatter_indices dims but index_vector_dim
  std::vector<int64_t> window_operand_dims;  // operand dims addressed by update_window_dims
  std::vector<int64_t> window_sizes;         // per operand dim: update size or 1
};

Result<ScatterGeometry> MakeGeometry(const ir::ScatterDimensionNumbers& dn,
                                     const ir::Shape& operand, const ir::Shape& indices,
                                     const ir::Shape& updates) {
  ScatterGeometry g;
  const int64_t indices_rank = indices.rank();
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank ||
      dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return InvalidArgument("index_vector_dim {} or batching dims are out of range",
                           dn.index_vector_dim);
  }
  const int64_t vector_size =
      dn.index_vector_dim == indices_rank ? 1 : indices.dim(dn.index_vector_dim);
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vector_size) {
    return InvalidArgument("scatter_dims_to_operand_dims has {} entries, the index vector {}",
                           dn.scatter_dims_to_operand_dims.size(), vector_size);
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= operand.rank()) return InvalidArgument("operand dim {} out of range", d);
  }
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(dn.update_window_dims, d)) g.scatter_update_dims.push_back(d);
  }
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != dn.index_vector_dim) g.indices_batch_dims.push_back(d);
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) {
      g.window_operand_dims.push_back(d);
    }
  }
  if (g.scatter_update_dims.size() != g.indices_batch_dims.size() ||
      g.window_operand_dims.size() != dn.update_window_dims.size()) {
    return InvalidArgument("updates {} do not match the scatter and window dims",
                           updates.ToString(false));
  }
  for (size_t j = 0; j < g.scatter_update_dims.size(); ++j) {
    if (updates.dim(g.scatter_update_dims[j]) != indices.dim(g.indices_batch_dims[j])) {
      return InvalidArgument("update dim {} has size {}, scatter_indices dim {} has {}",
                             g.scatter_update_dims[j], updates.dim(g.scatter_update_dims[j]),
                             g.indices_batch_dims[j], indices.dim(g.indices_batch_dims[j]));
    }
  }
  g.window_sizes.assign(static_cast<size_t>(operand.rank()), 1);
  for (size_t j = 0; j < g.window_operand_dims.size(); ++j) {
    const int64_t size = updates.dim(dn.update_window_dims[j]);
    if (size > operand.dim(g.window_operand_dims[j])) {
      return InvalidArgument("update window dim {} (size {}) exceeds operand dim {}",
                             dn.update_window_dims[j], size, g.window_operand_dims[j]);
    }
    g.window_sizes[static_cast<size_t>(g.window_operand_dims[j])] = size;
  }
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int64_t od = dn.input_batching_dims[i];
    const int64_t id = dn.scatter_indices_batching_dims[i];
    if (od < 0 || od >= operand.rank() || id < 0 || id >= indices_rank ||
        id == dn.index_vector_dim || operand.dim(od) != indices.dim(id)) {
      return InvalidArgument("batching dims {} (operand) and {} (scatter_indices) do not match",
                             od, id);
    }
  }
  return g;
}

}  // namespace

Result<Literal> EvaluateScatter(const ir::Instruction& instruction, const Operands& operands,
                                EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return InvalidArgument("scatter needs N operands, the indices and N updates");
  }
  if (!instruction.attributes().scatter_dims.has_value()) {
    return InvalidArgument("scatter has no dimension numbers");
  }
  const ir::ScatterDimensionNumbers& dn = *instruction.attributes().scatter_dims;
  const size_t n = operands.size() / 2;
  const Literal& indices = *operands[n];
  if (!ir::IsInteger(indices.shape().dtype())) {
    return InvalidArgument("scatter indices have element type {}",
                           ir::DTypeName(indices.shape().dtype()));
  }
  std::vector<Literal> outs;
  for (size_t k = 0; k < n; ++k) {
    const Literal& update = *operands[n + 1 + k];
    if (operands[k]->shape().dims() != operands[0]->shape().dims() ||
        update.shape().dims() != operands[n + 1]->shape().dims() ||
        update.shape().dtype() != operands[k]->shape().dtype()) {
      return InvalidArgument("operand {} and update {} must match the first ones in dims",
                             operands[k]->shape().ToString(false), update.shape().ToString(false));
    }
    outs.push_back(*operands[k]);
  }
  const ir::Shape& operand_shape = operands[0]->shape();
  const ir::Shape& update_shape = operands[n + 1]->shape();
  ALPA_ASSIGN_OR_RETURN(ScatterGeometry g,
                        MakeGeometry(dn, operand_shape, indices.shape(), update_shape));
  const ir::Shape& shape = instruction.shape();
  const bool shape_ok = n == 1 ? shape.Compatible(operand_shape)
                               : shape.IsTuple() && shape.tuple_size() == static_cast<int64_t>(n);
  if (!shape_ok) {
    return InvalidArgument("result {} must match the operands", shape.ToString(false));
  }
  if (update_shape.ElementCount() > 0) {
    const ir::Computation& combiner = *instruction.to_apply();
    const ir::DType dtype = operand_shape.dtype();
    const ReducerKind kind = n == 1 ? MatchReducer(combiner, dtype) : ReducerKind::kGeneral;
    const std::vector<int64_t> operand_strides = ir::RowMajorStrides(operand_shape.dims());
    const std::vector<int64_t> indices_strides = ir::RowMajorStrides(indices.shape().dims());
    const int64_t indices_rank = indices.shape().rank();
    const int64_t vector_stride =
        dn.index_vector_dim == indices_rank
            ? 0
            : indices_strides[static_cast<size_t>(dn.index_vector_dim)];
    std::vector<int64_t> u(static_cast<size_t>(update_shape.rank()), 0);
    std::vector<int64_t> start(static_cast<size_t>(operand_shape.rank()), 0);
    int64_t update_linear = 0;
    do {
      int64_t base = 0;
      for (size_t j = 0; j < g.scatter_update_dims.size(); ++j) {
        base += u[static_cast<size_t>(g.scatter_update_dims[j])] *
                indices_strides[static_cast<size_t>(g.indices_batch_dims[j])];
      }
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
        start[static_cast<size_t>(dn.scatter_dims_to_operand_dims[k])] =
            indices.GetInt(base + static_cast<int64_t>(k) * vector_stride);
      }
      for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
        const size_t j = static_cast<size_t>(
            std::find(g.indices_batch_dims.begin(), g.indices_batch_dims.end(),
                      dn.scatter_indices_batching_dims[i]) -
            g.indices_batch_dims.begin());
        start[static_cast<size_t>(dn.input_batching_dims[i])] =
            u[static_cast<size_t>(g.scatter_update_dims[j])];
      }
      bool valid = true;
      for (size_t d = 0; d < start.size(); ++d) {
        valid &= start[d] >= 0 && start[d] <= operand_shape.dims()[d] - g.window_sizes[d];
      }
      if (valid) {
        int64_t target = Dot(start, operand_strides);
        for (size_t j = 0; j < g.window_operand_dims.size(); ++j) {
          target += u[static_cast<size_t>(dn.update_window_dims[j])] *
                    operand_strides[static_cast<size_t>(g.window_operand_dims[j])];
        }
        if (kind != ReducerKind::kGeneral) {
          ALPA_RETURN_IF_ERROR(VisitDType(dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            return VisitReducer(kind, [&](auto op) -> Status {
              using Op = decltype(op);
              if constexpr (!Op::template kSupports<T>) {
                return InvalidArgument("the update computation is not defined on {}",
                                       ir::DTypeName(dtype));
              } else {
                T* data = outs[0].typed_data<T>();
                data[target] = Op::template Apply<T>(
                    data[target], operands[n + 1]->typed_data<T>()[update_linear]);
                return Status::Ok();
              }
            });
          }));
        } else {
          std::vector<Literal> arguments;
          for (size_t k = 0; k < n; ++k) arguments.push_back(ElementAsScalar(outs[k], target));
          for (size_t k = 0; k < n; ++k) {
            arguments.push_back(ElementAsScalar(*operands[n + 1 + k], update_linear));
          }
          ALPA_ASSIGN_OR_RETURN(std::vector<Literal> results,
                                CallScalars(combiner, std::move(arguments), context));
          if (results.size() != n) {
            return InvalidArgument("update computation {} returns {} values for {} operands",
                                   combiner.name(), results.size(), n);
          }
          for (size_t k = 0; k < n; ++k) {
            if (!results[k].shape().Compatible(ir::Shape::Scalar(outs[k].shape().dtype()))) {
              return InvalidArgument("update computation {} returns {}", combiner.name(),
                                     results[k].shape().ToString(false));
            }
            CopyElement(results[k], 0, outs[k], target);
          }
        }
      }
      ++update_linear;
    } while (NextIndex(u, update_shape.dims()));
  }
  if (n == 1) return std::move(outs[0]);
  return Literal::CreateTuple(std::move(outs));
}

}  // namespace alpa::interp::internal
