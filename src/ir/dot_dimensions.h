// The dimensions of a dot operand (XLA's DotGeneral, ir/attributes.h DotDimensionNumbers).
#ifndef ALPA_IR_DOT_DIMENSIONS_H_
#define ALPA_IR_DOT_DIMENSIONS_H_

#include <cstdint>
#include <vector>

#include "ir/attributes.h"

namespace alpa::ir {

// The dimensions of a dot operand of `rank` that are neither batch nor contracting, ascending:
// its free dimensions, which the output lists after the batch ones (lhs first, then rhs).
std::vector<int64_t> DotFreeDims(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting);

// The operand orders that make a dot one batched matmul: lhs [batch..., free..., contracting...]
// and rhs [batch..., contracting..., free...], batch and contracting dims in dimension-number
// order. With B, M, K and N the products of the groups' sizes,
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]
// row-major is the dot's result [batch..., lhs_free..., rhs_free...].
struct DotMatMulLayout {
  std::vector<int64_t> lhs_free;
  std::vector<int64_t> rhs_free;
  std::vector<int64_t> lhs_order;  // the lhs dimension at each position of A
  std::vector<int64_t> rhs_order;  // the rhs dimension at each position of B
};
DotMatMulLayout MatMulLayoutOf(int64_t lhs_rank, int64_t rhs_rank, const DotDimensionNumbers& dims);

}  // namespace alpa::ir

#endif  // ALPA_IR_DOT_DIMENSIONS_H_
