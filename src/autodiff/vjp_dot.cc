// The rule of dot (XLA's dot_general). The result's dimensions are [batch, lhs free, rhs free],
// each group in operand order. With cotangent g:
//   d lhs = dot(g, rhs) batching g's batch dims with rhs's and contracting g's rhs-free dims with
//           rhs's free dims; that gives [batch, lhs free, rhs contracting (ascending)], which a
//           transpose puts back in lhs's order (lhs contracting dim j pairs with rhs
//           contracting dim j);
//   d rhs = the same with the roles swapped: dot(g, lhs) contracting g's lhs-free dims.
// This is JAX's _dot_general_transpose_lhs/_rhs.
#include <algorithm>

#include "autodiff/vjp.h"
#include "ir/dot_dimensions.h"

namespace alpa::autodiff {

using ir::Instruction;

namespace {

int64_t IndexOf(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) - values.begin();
}

// The cotangent of one operand `x` (batch dims x_batch, contracting x_contracting) given the
// other operand `other` (other_batch, other_contracting, paired with x's in order). `g_free` are
// the dims of g that came from `other`'s free dims; x's free dims follow the batch dims in g.
Instruction* OperandCotangent(Instruction* g, Instruction* x, Instruction* other,
                              const std::vector<int64_t>& x_batch,
                              const std::vector<int64_t>& x_contracting,
                              const std::vector<int64_t>& other_batch,
                              const std::vector<int64_t>& other_contracting,
                              const std::vector<int64_t>& g_free, ir::ComputationBuilder& b) {
  const int64_t rank = x->shape().rank();
  const std::vector<int64_t> other_free =
      ir::DotFreeDims(other->shape().rank(), other_batch, other_contracting);
  const std::vector<int64_t> x_free = ir::DotFreeDims(rank, x_batch, x_contracting);
  std::vector<int64_t> g_batch(x_batch.size());
  for (size_t i = 0; i < g_batch.size(); ++i) g_batch[i] = static_cast<int64_t>(i);
  Instruction* product = b.Dot(g, other, {g_batch, other_batch, g_free, other_free});
  // product: [batch, x free, other contracting ascending]; x's dim d goes to position[d].
  std::vector<int64_t> sorted_other_contracting = other_contracting;
  std::sort(sorted_other_contracting.begin(), sorted_other_contracting.end());
  const int64_t nb = static_cast<int64_t>(x_batch.size());
  const int64_t nf = static_cast<int64_t>(x_free.size());
  std::vector<int64_t> position(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (int64_t i = IndexOf(x_batch, d); i < nb) {
      position[d] = i;
    } else if (int64_t k = IndexOf(x_free, d); k < nf) {
      position[d] = nb + k;
    } else {
      const int64_t paired = other_contracting[IndexOf(x_contracting, d)];
      position[d] = nb + nf + IndexOf(sorted_other_contracting, paired);
    }
  }
  Instruction* cotangent = b.Transpose(product, position);
  if (cotangent != nullptr && cotangent->shape().dtype() != x->shape().dtype()) {
    cotangent = b.Convert(cotangent, x->shape().dtype());
  }
  return cotangent;
}

}  // namespace

Result<std::vector<Instruction*>> DotVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const ir::DotDimensionNumbers& n = *in.forward.attributes().dot_dims;
  Instruction* lhs = in.operands[0];
  Instruction* rhs = in.operands[1];
  const int64_t nb = static_cast<int64_t>(n.lhs_batch_dims.size());
  const int64_t n_lhs_free = static_cast<int64_t>(
      ir::DotFreeDims(lhs->shape().rank(), n.lhs_batch_dims, n.lhs_contracting_dims).size());
  const int64_t n_rhs_free = static_cast<int64_t>(
      ir::DotFreeDims(rhs->shape().rank(), n.rhs_batch_dims, n.rhs_contracting_dims).size());
  std::vector<int64_t> g_lhs_free, g_rhs_free;
  for (int64_t i = 0; i < n_lhs_free; ++i) g_lhs_free.push_back(nb + i);
  for (int64_t i = 0; i < n_rhs_free; ++i) g_rhs_free.push_back(nb + n_lhs_free + i);
  Instruction* g = in.cotangent;
  return std::vector<Instruction*>{
      OperandCotangent(g, lhs, rhs, n.lhs_batch_dims, n.lhs_contracting_dims, n.rhs_batch_dims,
                       n.rhs_contracting_dims, g_rhs_free, b),
      OperandCotangent(g, rhs, lhs, n.rhs_batch_dims, n.rhs_contracting_dims, n.lhs_batch_dims,
                       n.lhs_contracting_dims, g_lhs_free, b)};
}

}  // namespace alpa::autodiff
