// dot, through kernels::BatchMatMul.
//
// The operands are transposed to the batched-matmul layout of ir::MatMulLayoutOf (lhs
// [batch..., lhs_free..., contracting...], rhs [batch..., contracting..., rhs_free...]), whose
// row-major product C[b, m, n] is already the dot's result.
// A result element type different from the operands' (preferred_element_type, e.g. bf16 x bf16
// -> f32) is honoured by converting the operands first: products and sums happen in the result
// type.
#include <algorithm>

#include "interp/literal_util.h"
#include "interp/ops.h"
#include "ir/dot_dimensions.h"
#include "kernels/matmul.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

int64_t Product(const ir::Shape& shape, const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= shape.dim(d);
  return product;
}

Status CheckDims(const std::vector<int64_t>& dims, int64_t rank, const char* what) {
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= rank || (i > 0 && sorted[i] == sorted[i - 1])) {
      return InvalidArgument("{} {} is out of range or repeated for rank {}", what, sorted[i],
                             rank);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Literal> EvaluateDot(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  if (!instruction.attributes().dot_dims.has_value()) {
    return InvalidArgument("dot has no dimension numbers (lhs_contracting_dims=...)");
  }
  const ir::DotDimensionNumbers& dn = *instruction.attributes().dot_dims;
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const ir::Shape& shape = instruction.shape();
  const int64_t lhs_rank = lhs.shape().rank();
  const int64_t rhs_rank = rhs.shape().rank();
  ALPA_RETURN_IF_ERROR(CheckDims(dn.lhs_batch_dims, lhs_rank, "lhs_batch_dims"));
  ALPA_RETURN_IF_ERROR(CheckDims(dn.rhs_batch_dims, rhs_rank, "rhs_batch_dims"));
  ALPA_RETURN_IF_ERROR(CheckDims(dn.lhs_contracting_dims, lhs_rank, "lhs_contracting_dims"));
  ALPA_RETURN_IF_ERROR(CheckDims(dn.rhs_contracting_dims, rhs_rank, "rhs_contracting_dims"));
  if (dn.lhs_batch_dims.size() != dn.rhs_batch_dims.size() ||
      dn.lhs_contracting_dims.size() != dn.rhs_contracting_dims.size()) {
    return InvalidArgument("lhs and rhs need as many batch and contracting dims");
  }
  for (size_t i = 0; i < dn.lhs_batch_dims.size(); ++i) {
    if (lhs.shape().dim(dn.lhs_batch_dims[i]) != rhs.shape().dim(dn.rhs_batch_dims[i])) {
      return InvalidArgument("batch dims {} and {} differ in size", dn.lhs_batch_dims[i],
                             dn.rhs_batch_dims[i]);
    }
  }
  for (size_t i = 0; i < dn.lhs_contracting_dims.size(); ++i) {
    if (lhs.shape().dim(dn.lhs_contracting_dims[i]) !=
        rhs.shape().dim(dn.rhs_contracting_dims[i])) {
      return InvalidArgument("contracting dims {} and {} differ in size",
                             dn.lhs_contracting_dims[i], dn.rhs_contracting_dims[i]);
    }
  }
  const ir::DotMatMulLayout layout = ir::MatMulLayoutOf(lhs_rank, rhs_rank, dn);
  const std::vector<int64_t>& lhs_free = layout.lhs_free;
  const std::vector<int64_t>& rhs_free = layout.rhs_free;
  std::vector<int64_t> result_dims;
  for (int64_t d : dn.lhs_batch_dims) result_dims.push_back(lhs.shape().dim(d));
  for (int64_t d : lhs_free) result_dims.push_back(lhs.shape().dim(d));
  for (int64_t d : rhs_free) result_dims.push_back(rhs.shape().dim(d));
  if (!shape.IsArray() || shape.dims() != result_dims) {
    return InvalidArgument("result {} does not have the dot's dims [{}]", shape.ToString(false),
                           fmt::join(result_dims, ","));
  }
  const ir::DType dtype = shape.dtype();
  Literal a = Permute(lhs, layout.lhs_order);
  Literal b = Permute(rhs, layout.rhs_order);
  if (a.shape().dtype() != dtype) {
    ALPA_ASSIGN_OR_RETURN(a, ConvertLiteral(a, dtype));
  }
  if (b.shape().dtype() != dtype) {
    ALPA_ASSIGN_OR_RETURN(b, ConvertLiteral(b, dtype));
  }
  const int64_t batch = Product(lhs.shape(), dn.lhs_batch_dims);
  const int64_t m = Product(lhs.shape(), lhs_free);
  const int64_t k = Product(lhs.shape(), dn.lhs_contracting_dims);
  const int64_t n = Product(rhs.shape(), rhs_free);
  Literal out = Literal::CreateZeros(shape);
  // An empty contraction sums nothing: the zeros are the result.
  if (out.element_count() == 0 || k == 0) return out;
  ALPA_RETURN_IF_ERROR(kernels::BatchMatMul(dtype, batch, m, k, n, a.data(), b.data(), out.data()));
  return out;
}

}  // namespace alpa::interp::internal
