// sort (variadic) along one dimension with a comparator computation.
//
// The comparator takes 2N scalars (lhs and rhs of operand 0, then of operand 1, ...) and returns
// "lhs sorts before rhs". Every 1-D slice along `dimensions={d}` is sorted by a bottom-up merge
// sort, which is stable (so is_stable always holds) and stays in bounds even if the comparator
// is not a strict weak order. `compare(p0, p1), direction=LT|GT` (optionally TOTALORDER) is run
// as a typed comparison of operand 0, without calling the computation.
//
// topk(x), k=K, largest=L: the K largest (smallest for L=false) elements of every 1-D slice along
// the last dimension and their s32 indices. XLA defines it as a stable sort of (x, iota) with a
// total-order GT (LT) comparator on x, sliced to K; so equal values keep the lower index first,
// -0 < +0, and NaN orders by sign: +NaN above +inf, -NaN below -inf.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "interp/computation_call.h"
#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// Stable merge sort of `order` by `less`, which may fail.
template <typename Less>
Status MergeSort(std::vector<int64_t>& order, Less less) {
  const size_t n = order.size();
  std::vector<int64_t> buffer(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = std::min(lo + width, n);
      const size_t hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        // Take from the right only when it is strictly less: that keeps equal keys in order.
        ALPA_ASSIGN_OR_RETURN(bool right_first, less(order[j], order[i]));
        buffer[k++] = right_first ? order[j++] : order[i++];
      }
      while (i < mid) buffer[k++] = order[i++];
      while (j < hi) buffer[k++] = order[j++];
    }
    order.swap(buffer);
  }
  return Status::Ok();
}

// Total order key of a float as a signed integer (see compare_select.cc).
template <typename T>
int64_t TotalOrder(T value) {
  if constexpr (sizeof(T) == 2) {
    int16_t bits;
    std::memcpy(&bits, &value, 2);
    return bits < 0 ? (bits ^ 0x7FFF) : bits;
  } else if constexpr (sizeof(T) == 4) {
    int32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits < 0 ? (bits ^ 0x7FFFFFFF) : bits;
  } else {
    int64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits < 0 ? (bits ^ 0x7FFFFFFFFFFFFFFF) : bits;
  }
}

// The typed fast path's comparison, or nullopt when the comparator is not a plain compare.
struct FastComparator {
  ir::ComparisonDirection direction;
  bool total_order;
};

std::optional<FastComparator> MatchSortComparator(const ir::Computation& comparator) {
  const ir::Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != ir::Opcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  auto is_param = [](const ir::Instruction* i, int64_t number) {
    return i->opcode() == ir::Opcode::kParameter && i->attributes().parameter_number == number;
  };
  const ir::Attributes& a = root->attributes();
  const bool ordered = a.comparison_direction == ir::ComparisonDirection::kLt ||
                       a.comparison_direction == ir::ComparisonDirection::kGt;
  const bool type_ok = a.comparison_type == ir::ComparisonType::kDefault ||
                       a.comparison_type == ir::ComparisonType::kTotalOrder;
  if (!ordered || !type_ok || !is_param(root->operand(0), 0) || !is_param(root->operand(1), 1)) {
    return std::nullopt;
  }
  return FastComparator{a.comparison_direction,
                        a.comparison_type == ir::ComparisonType::kTotalOrder};
}

// Stable sort of the indices 0..n-1 of one slice by `key`, descending when `largest`; writes the
// first k values and their indices to `values` and `indices`.
template <typename T, typename Key>
void TopKOfSlice(const T* slice, int64_t n, int64_t k, bool largest, Key key, T* values,
                 int32_t* indices) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return largest ? key(slice[b]) < key(slice[a]) : key(slice[a]) < key(slice[b]);
  });
  for (int64_t i = 0; i < k; ++i) {
    values[i] = slice[order[static_cast<size_t>(i)]];
    indices[i] = static_cast<int32_t>(order[static_cast<size_t>(i)]);
  }
}

}  // namespace

Result<Literal> EvaluateTopK(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const std::vector<int64_t>& dims = in.shape().dims();
  const int64_t k = instruction.attributes().k;
  if (dims.empty() || k < 0 || k > dims.back()) {
    return InvalidArgument("k={} must lie in [0, last dimension] of operand {}", k,
                           in.shape().ToString(false));
  }
  if (dims.back() > INT32_MAX) {
    return InvalidArgument("last dimension {} does not fit the s32 indices", dims.back());
  }
  std::vector<int64_t> out_dims = dims;
  out_dims.back() = k;
  const ir::Shape values_shape = ir::Shape::Array(in.shape().dtype(), out_dims);
  const ir::Shape indices_shape = ir::Shape::Array(ir::DType::kS32, out_dims);
  const ir::Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 2 ||
      !shape.tuple_shape(0).Compatible(values_shape) ||
      !shape.tuple_shape(1).Compatible(indices_shape)) {
    return InvalidArgument("result {} must be ({}, {})", shape.ToString(false),
                           values_shape.ToString(false), indices_shape.ToString(false));
  }
  Literal values = Literal::CreateZeros(values_shape);
  Literal indices = Literal::CreateZeros(indices_shape);
  const int64_t n = dims.back();
  // Rows are contiguous: row r is elements [r * n, (r + 1) * n) of the row-major operand.
  const int64_t rows = n == 0 ? 0 : in.element_count() / n;
  const bool largest = instruction.attributes().largest;
  ALPA_RETURN_IF_ERROR(VisitDType(in.shape().dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (kIsComplex<T>) {
      return InvalidArgument("complex values have no order");
    } else {
      const T* data = in.typed_data<T>();
      T* out_values = values.typed_data<T>();
      int32_t* out_indices = indices.typed_data<int32_t>();
      for (int64_t r = 0; r < rows; ++r) {
        auto run = [&](auto key) {
          TopKOfSlice<T>(data + r * n, n, k, largest, key, out_values + r * k, out_indices + r * k);
        };
        if constexpr (kIsFloat<T>) {
          run([](T x) { return TotalOrder(x); });
        } else {
          run([](T x) { return x; });
        }
      }
      return Status::Ok();
    }
  }));
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::CreateTuple(std::move(elements));
}

Result<Literal> EvaluateSort(const ir::Instruction& instruction, const Operands& operands,
                             EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  if (operands.empty()) return InvalidArgument("sort needs at least one operand");
  const std::vector<int64_t>& dims = operands[0]->shape().dims();
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1 || dimensions[0] < 0 ||
      dimensions[0] >= static_cast<int64_t>(dims.size())) {
    return InvalidArgument("sort needs one dimension in range, dimensions has {} entries",
                           dimensions.size());
  }
  const size_t n = operands.size();
  const ir::Shape& shape = instruction.shape();
  if (n > 1 && (!shape.IsTuple() || shape.tuple_size() != static_cast<int64_t>(n))) {
    return InvalidArgument("result {} must be a tuple of {} arrays", shape.ToString(false), n);
  }
  for (size_t k = 0; k < n; ++k) {
    const ir::Shape& result = n == 1 ? shape : shape.tuple_shape(static_cast<int64_t>(k));
    if (operands[k]->shape().dims() != dims || !result.Compatible(operands[k]->shape())) {
      return InvalidArgument("operand {} ({}) must match operand 0's dims and the result", k,
                             operands[k]->shape().ToString(false));
    }
  }
  const ir::Computation& comparator = *instruction.to_apply();
  if (comparator.parameter_count() != static_cast<int64_t>(2 * n)) {
    return InvalidArgument("comparator {} takes {} parameters, needs {}", comparator.name(),
                           comparator.parameter_count(), 2 * n);
  }
  const int64_t d = dimensions[0];
  const int64_t length = dims[static_cast<size_t>(d)];
  const int64_t stride = ir::RowMajorStrides(dims)[static_cast<size_t>(d)];
  std::vector<Literal> outs;
  for (const Literal* operand : operands) outs.push_back(*operand);
  if (operands[0]->element_count() == 0) {
    return n == 1 ? std::move(outs[0]) : Literal::CreateTuple(std::move(outs));
  }
  const std::optional<FastComparator> fast = MatchSortComparator(comparator);
  // The slices: every index with 0 at dimension d.
  std::vector<int64_t> slice_dims = dims;
  slice_dims[static_cast<size_t>(d)] = 1;
  const std::vector<int64_t> strides = ir::RowMajorStrides(dims);
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<int64_t> order(static_cast<size_t>(length));
  do {
    const int64_t base = Dot(index, strides);
    for (int64_t i = 0; i < length; ++i) order[static_cast<size_t>(i)] = base + i * stride;
    Status status;
    if (fast.has_value()) {
      status = VisitDType(operands[0]->shape().dtype(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        if constexpr (kIsComplex<T>) {
          return InvalidArgument("complex values have no order");
        } else {
          const T* data = operands[0]->typed_data<T>();
          const bool less_than = fast->direction == ir::ComparisonDirection::kLt;
          auto sort_by = [&](auto key) {
            return MergeSort(order, [&](int64_t a, int64_t b) -> Result<bool> {
              return less_than ? key(a) < key(b) : key(a) > key(b);
            });
          };
          if constexpr (kIsFloat<T>) {
            // Total-order keys are compared as integers: an f64 key converted to double would
            // lose its low bits and merge neighbouring values (1 and 1 + 2^-52).
            if (fast->total_order) {
              return sort_by([&](int64_t i) { return TotalOrder(data[i]); });
            }
            return sort_by([&](int64_t i) { return static_cast<ComputeType<T>>(data[i]); });
          } else {
            return sort_by([&](int64_t i) { return data[i]; });
          }
        }
      });
    } else {
      status = MergeSort(order, [&](int64_t a, int64_t b) -> Result<bool> {
        std::vector<Literal> arguments;
        for (size_t k = 0; k < n; ++k) {
          arguments.push_back(ElementAsScalar(*operands[k], a));
          arguments.push_back(ElementAsScalar(*operands[k], b));
        }
        ALPA_ASSIGN_OR_RETURN(std::vector<Literal> result,
                              CallScalars(comparator, std::move(arguments), context));
        if (result.size() != 1 || result[0].shape().dtype() != ir::DType::kPred ||
            result[0].shape().rank() != 0) {
          return InvalidArgument("comparator {} must return a pred scalar", comparator.name());
        }
        return result[0].GetInt(0) != 0;
      });
    }
    ALPA_RETURN_IF_ERROR(status);
    for (size_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < length; ++i) {
        CopyElement(*operands[k], order[static_cast<size_t>(i)], outs[k], base + i * stride);
      }
    }
  } while (NextIndex(index, slice_dims));
  if (n == 1) return std::move(outs[0]);
  return Literal::CreateTuple(std::move(outs));
}

}  // namespace alpa::interp::internal
