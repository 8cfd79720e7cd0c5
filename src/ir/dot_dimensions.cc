#include "ir/dot_dimensions.h"

#include <algorithm>

namespace alpa::ir {

std::vector<int64_t> DotFreeDims(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

DotMatMulLayout MatMulLayoutOf(int64_t lhs_rank, int64_t rhs_rank,
                               const DotDimensionNumbers& dims) {
  DotMatMulLayout layout;
  layout.lhs_free = DotFreeDims(lhs_rank, dims.lhs_batch_dims, dims.lhs_contracting_dims);
  layout.rhs_free = DotFreeDims(rhs_rank, dims.rhs_batch_dims, dims.rhs_contracting_dims);
  std::vector<int64_t>& lhs = layout.lhs_order;
  lhs = dims.lhs_batch_dims;
  lhs.insert(lhs.end(), layout.lhs_free.begin(), layout.lhs_free.end());
  lhs.insert(lhs.end(), dims.lhs_contracting_dims.begin(), dims.lhs_contracting_dims.end());
  std::vector<int64_t>& rhs = layout.rhs_order;
  rhs = dims.rhs_batch_dims;
  rhs.insert(rhs.end(), dims.rhs_contracting_dims.begin(), dims.rhs_contracting_dims.end());
  rhs.insert(rhs.end(), layout.rhs_free.begin(), layout.rhs_free.end());
  return layout;
}

}  // namespace alpa::ir
