// The indexing kernels of the runtime's kernel choice: a gather or scatter whose every index
// picks one whole row of a [rows, width] table (kernels/indexing.h), the shape of an embedding
// lookup and of its gradient:
//   gather   offset_dims={r}, collapsed_slice_dims={0}, start_index_map={0},
//            index_vector_dim=r, slice_sizes={1, width}: result [indices..., width]
//   scatter  update_window_dims={r}, inserted_window_dims={0},
//            scatter_dims_to_operand_dims={0}, index_vector_dim=r, an add combiner of the
//            table's type (f32, f16 or bf16):
//            updates [indices..., width] added into a copy of the table
// with s32 indices of rank r and no batching dimensions. Other gathers and scatters run in the
// interpreter.
#include "ir/computation.h"
#include "kernels/indexing.h"
#include "runtime/fast_kernels_internal.h"

namespace alpa::runtime::internal {
namespace {

// Whether `table` is [rows, width] and `indices` s32 of rank r with the result/updates shape
// [indices..., width].
bool RowsOfTable(const Shape& table, const Shape& indices, const Shape& rows_out) {
  if (!table.IsArray() || table.rank() != 2 || !IsArrayOf(indices, DType::kS32)) return false;
  std::vector<int64_t> expected = indices.dims();
  expected.push_back(table.dim(1));
  return rows_out.IsArray() && rows_out.dtype() == table.dtype() && rows_out.dims() == expected;
}

Result<Literal> RunGatherRows(const ir::Instruction& instruction, const Operands& operands) {
  const Literal& table = *operands[0];
  const Literal& indices = *operands[1];
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::GatherRows(table.data(), table.shape().dim(0),
                      table.shape().dim(1) * ir::DTypeByteSize(table.shape().dtype()),
                      indices.typed_data<int32_t>(), indices.element_count(), out.data());
  return out;
}

Result<Literal> RunScatterAddRows(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = *operands[0];  // a copy of the table, which the updates are added into
  const Literal& indices = *operands[1];
  const DType dtype = out.shape().dtype();
  if (dtype == DType::kF32) {
    kernels::ScatterAddRowsF32(out.typed_data<float>(), out.shape().dim(0), out.shape().dim(1),
                               indices.typed_data<int32_t>(), indices.element_count(),
                               operands[2]->typed_data<float>());
  } else {
    kernels::ScatterAddRows16(dtype, out.data(), out.shape().dim(0), out.shape().dim(1),
                              indices.typed_data<int32_t>(), indices.element_count(),
                              operands[2]->data());
  }
  return out;
}

bool GathersRows(const ir::Instruction& gather) {
  const ir::Attributes& a = gather.attributes();
  if (gather.operand_count() != 2 || !a.gather_dims) return false;
  const Shape& table = gather.operand(0)->shape();
  const Shape& indices = gather.operand(1)->shape();
  if (!RowsOfTable(table, indices, gather.shape())) return false;
  const int64_t r = indices.rank();
  const ir::GatherDimensionNumbers& dn = *a.gather_dims;
  return dn.offset_dims == std::vector<int64_t>{r} &&
         dn.collapsed_slice_dims == std::vector<int64_t>{0} &&
         dn.start_index_map == std::vector<int64_t>{0} && dn.index_vector_dim == r &&
         dn.operand_batching_dims.empty() && a.slice_sizes == std::vector<int64_t>{1, table.dim(1)};
}

bool ScatterAddsRows(const ir::Instruction& scatter) {
  const ir::Attributes& a = scatter.attributes();
  if (scatter.operand_count() != 3 || !a.scatter_dims || scatter.to_apply() == nullptr)
    return false;
  const Shape& table = scatter.operand(0)->shape();
  const Shape& indices = scatter.operand(1)->shape();
  if (!table.IsArray() || !ir::IsF32F16OrBF16(table.dtype()) || scatter.shape() != table ||
      !RowsOfTable(table, indices, scatter.operand(2)->shape()) ||
      ir::ScalarBinaryOpcode(*scatter.to_apply(), table.dtype()) != Opcode::kAdd) {
    return false;
  }
  const int64_t r = indices.rank();
  const ir::ScatterDimensionNumbers& dn = *a.scatter_dims;
  return dn.update_window_dims == std::vector<int64_t>{r} &&
         dn.inserted_window_dims == std::vector<int64_t>{0} &&
         dn.scatter_dims_to_operand_dims == std::vector<int64_t>{0} && dn.index_vector_dim == r &&
         dn.input_batching_dims.empty();
}

}  // namespace

FastKernel SelectIndexing(const ir::Instruction& instruction) {
  if (instruction.opcode() == Opcode::kGather)
    return GathersRows(instruction) ? RunGatherRows : nullptr;
  if (instruction.opcode() == Opcode::kScatter) {
    return ScatterAddsRows(instruction) ? RunScatterAddRows : nullptr;
  }
  return nullptr;
}

}  // namespace alpa::runtime::internal
