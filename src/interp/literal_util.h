// Internal to the interpreter: multi-index iteration and element copies on row-major literals.
#ifndef ALPA_INTERP_LITERAL_UTIL_H_
#define ALPA_INTERP_LITERAL_UTIL_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"

namespace alpa::interp::internal {

// Advances `index` to the next position of `dims` in row-major order (last dimension fastest).
// Returns false, with `index` back at all zeros, after the last position.
inline bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    size_t i = static_cast<size_t>(d);
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// sum_i index[i] * strides[i]
inline int64_t Dot(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += index[i] * strides[i];
  return linear;
}

// Copies element `from` of `source` to element `to` of `target` (same element type).
inline void CopyElement(const ir::Literal& source, int64_t from, ir::Literal& target, int64_t to) {
  const int64_t size = ir::DTypeByteSize(source.shape().dtype());
  std::memcpy(target.data() + to * size, source.data() + from * size, static_cast<size_t>(size));
}

// Element `index` of an array literal as a rank-0 literal.
inline ir::Literal ElementAsScalar(const ir::Literal& source, int64_t index) {
  ir::Literal scalar = ir::Literal::CreateZeros(ir::Shape::Scalar(source.shape().dtype()));
  CopyElement(source, index, scalar, 0);
  return scalar;
}

// The value of an integer (or pred) scalar, e.g. a dynamic-slice start index.
inline int64_t ScalarIndex(const ir::Literal& scalar) { return scalar.GetInt(0); }

// Handlers check their operand count first, so a malformed instruction is an error, not a crash.
template <typename Container>
Status ExpectOperandCount(const Container& operands, size_t count) {
  if (operands.size() != count) {
    return InvalidArgument("expects {} operands, has {}", count, operands.size());
  }
  return Status::Ok();
}

// Handlers of array ops check that every operand is an array with data.
template <typename Container>
Status ExpectArrayOperands(const Container& operands) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->shape().IsArray()) {
      return InvalidArgument("operand {} has shape {}, expected an array", i,
                             operands[i]->shape().ToString(false));
    }
  }
  return Status::Ok();
}

}  // namespace alpa::interp::internal

#endif  // ALPA_INTERP_LITERAL_UTIL_H_
