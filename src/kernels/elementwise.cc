#include "kernels/elementwise.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/half_conversion.h"
#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using ConstF = Eigen::Map<const ArrayF>;
using MutF = Eigen::Map<ArrayF>;

// Eigen's NaN-propagating max and min (XLA's semantics; std::max would drop a NaN in b).
using MaxOp = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
using MinOp = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;

template <typename Expr>
void ForChunks(int64_t n, const Expr& expr) {
  internal::ParallelFor(n, internal::kElementGrain, expr);
}

template <typename T>
void CompareLoop(ir::ComparisonDirection direction, const T* a, const T* b, bool* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    switch (direction) {
      case ir::ComparisonDirection::kEq:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] == b[i];
        break;
      case ir::ComparisonDirection::kNe:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] != b[i];
        break;
      case ir::ComparisonDirection::kLt:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] < b[i];
        break;
      case ir::ComparisonDirection::kLe:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] <= b[i];
        break;
      case ir::ComparisonDirection::kGt:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] > b[i];
        break;
      case ir::ComparisonDirection::kGe:
        for (int64_t i = begin; i < end; ++i) out[i] = a[i] >= b[i];
        break;
    }
  });
}

// Eigen 3.4's SSE exp clamps its argument at -88.38, so exp(-inf) came out 2.9e-39 (a denormal,
// slowly), not 0; its log reads a denormal as the smallest normal float (log(1e-45) = -87.3, not
// -103.3). Below ln(FLT_MIN) exp is denormal or 0, and below FLT_MIN log's argument is denormal:
// there (and for NaN, which `!(v >= ...)` catches) the C library's exact functions run instead.
constexpr float kFloatMin = std::numeric_limits<float>::min();
constexpr float kExpNormalFrom = -87.33654f;  // ln(FLT_MIN), rounded up

// Below ln(2^-150) exp rounds to 0: answered without the C library's slow underflow path.
float ExactExp(float v) { return v < -104.0f ? 0.0f : std::exp(v); }

// out[begin, end) = vectorised(x) where exact_here(x) is false, exact(x) where it is true. A block
// with such elements is staged first, so that `out` may alias `x`.
template <typename Vectorised, typename ExactHere, typename Exact>
void WithExactTail(const float* x, float* out, int64_t begin, int64_t end,
                   const Vectorised& vectorised, const ExactHere& exact_here, const Exact& exact) {
  constexpr int64_t kBlock = 1024;
  float staged[kBlock];
  for (int64_t first = begin; first < end; first += kBlock) {
    const int64_t length = std::min(kBlock, end - first);
    bool any = false;
    for (int64_t i = 0; i < length; ++i) any |= exact_here(x[first + i]);
    if (!any) {
      MutF(out + first, length) = vectorised(ConstF(x + first, length));
      continue;
    }
    std::copy(x + first, x + first + length, staged);
    MutF(out + first, length) = vectorised(ConstF(staged, length));
    for (int64_t i = 0; i < length; ++i) {
      if (exact_here(staged[i])) out[first + i] = exact(staged[i]);
    }
  }
}

template <typename T>
void Iota(T* out, int64_t n, int64_t stride, int64_t extent) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>((i / stride) % extent);
  });
}

}  // namespace

void UnaryF32(UnaryFn fn, const float* x, float* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    const ConstF in(x + begin, end - begin);
    MutF result(out + begin, end - begin);
    switch (fn) {
      case UnaryFn::kNegate:
        result = -in;
        break;
      case UnaryFn::kAbs:
        result = in.abs();
        break;
      case UnaryFn::kExp:
        // Clamped so that Eigen never computes a denormal (slow); the C library takes the rest.
        WithExactTail(
            x, out, begin, end, [](const ConstF& v) { return v.max(kExpNormalFrom).exp(); },
            [](float v) { return !(v >= kExpNormalFrom); }, ExactExp);
        break;
      case UnaryFn::kLog:
        WithExactTail(
            x, out, begin, end, [](const ConstF& v) { return v.log(); },
            [](float v) { return v > 0 && v < kFloatMin; }, [](float v) { return std::log(v); });
        break;
      case UnaryFn::kTanh:
        result = in.tanh();
        break;
      case UnaryFn::kLogistic:
        // exp(-v) as the kExp case computes it: Eigen's where -v is at least ln(FLT_MIN), the C
        // library's beyond (v above 87.3, where the result rounds to 1, and NaN).
        WithExactTail(
            x, out, begin, end,
            [](const ConstF& v) { return ((-v).max(kExpNormalFrom).exp() + 1.0f).inverse(); },
            [](float v) { return !(-v >= kExpNormalFrom); },
            [](float v) { return 1.0f / (1.0f + ExactExp(-v)); });
        break;
      case UnaryFn::kSqrt:
        for (int64_t i = begin; i < end; ++i) out[i] = std::sqrt(x[i]);
        break;
      case UnaryFn::kRsqrt:
        for (int64_t i = begin; i < end; ++i) out[i] = 1.0f / std::sqrt(x[i]);
        break;
      case UnaryFn::kSine:
        for (int64_t i = begin; i < end; ++i) out[i] = std::sin(x[i]);
        break;
      case UnaryFn::kCosine:
        for (int64_t i = begin; i < end; ++i) out[i] = std::cos(x[i]);
        break;
    }
  });
}

namespace {

// result = fn(lhs, rhs) for Eigen array expressions of one length (arrays or constants).
template <typename Lhs, typename Rhs>
void ApplyBinary(BinaryFn fn, const Lhs& lhs, const Rhs& rhs, MutF result) {
  switch (fn) {
    case BinaryFn::kAdd:
      result = lhs + rhs;
      break;
    case BinaryFn::kSubtract:
      result = lhs - rhs;
      break;
    case BinaryFn::kMultiply:
      result = lhs * rhs;
      break;
    case BinaryFn::kDivide:
      result = lhs / rhs;
      break;
    case BinaryFn::kMaximum:
      result = lhs.binaryExpr(rhs, MaxOp());
      break;
    case BinaryFn::kMinimum:
      result = lhs.binaryExpr(rhs, MinOp());
      break;
    case BinaryFn::kPower:
      result = lhs.binaryExpr(rhs, [](float x, float y) { return std::pow(x, y); });
      break;
  }
}

// One row of n elements, each operand contiguous (stride 1) or one value repeated (stride 0).
void BinaryRow(BinaryFn fn, const float* a, int64_t a_stride, const float* b, int64_t b_stride,
               float* out, int64_t n) {
  MutF result(out, n);
  if (a_stride == 1 && b_stride == 1) {
    ApplyBinary(fn, ConstF(a, n), ConstF(b, n), result);
  } else if (a_stride == 1) {
    ApplyBinary(fn, ConstF(a, n), ArrayF::Constant(n, *b), result);
  } else if (b_stride == 1) {
    ApplyBinary(fn, ArrayF::Constant(n, *a), ConstF(b, n), result);
  } else {
    ApplyBinary(fn, ArrayF::Constant(n, *a), ArrayF::Constant(n, *b), result);
  }
}

// `length` elements of a 16-bit row read at stride 1 or 0, widened into `block`.
void WidenRow(ir::DType dtype, const uint16_t* row, int64_t stride, float* block, int64_t length) {
  internal::Widen16ToF32(dtype, row, block, stride == 1 ? length : 1);
  if (stride == 0) std::fill(block + 1, block + length, block[0]);
}

// BinaryRow over 16-bit elements, block by block: widened, combined in f32, rounded once.
void BinaryRow16(BinaryFn fn, ir::DType dtype, const uint16_t* a, int64_t a_stride,
                 const uint16_t* b, int64_t b_stride, uint16_t* out, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float lhs[kBlock], rhs[kBlock], result[kBlock];
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t length = std::min(kBlock, n - first);
    WidenRow(dtype, a + first * a_stride, a_stride, lhs, length);
    WidenRow(dtype, b + first * b_stride, b_stride, rhs, length);
    BinaryRow(fn, lhs, 1, rhs, 1, result, length);
    internal::NarrowF32To16(result, dtype, out + first, length);
  }
}

}  // namespace

void BinaryF32(BinaryFn fn, const float* a, const float* b, float* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    BinaryRow(fn, a + begin, 1, b + begin, 1, out + begin, end - begin);
  });
}

void BinaryStrided(BinaryFn fn, ir::DType dtype, const StridedOperand& a, const StridedOperand& b,
                   void* out, const std::vector<int64_t>& dims) {
  // One row of the merged result: `row` elements from a's element a_offset at a_step and b's.
  auto run_row = [&](int64_t a_offset, int64_t a_step, int64_t b_offset, int64_t b_step,
                     int64_t out_offset, int64_t row) {
    if (dtype == ir::DType::kF32) {
      BinaryRow(fn, static_cast<const float*>(a.data) + a_offset, a_step,
                static_cast<const float*>(b.data) + b_offset, b_step,
                static_cast<float*>(out) + out_offset, row);
    } else {
      BinaryRow16(fn, dtype, static_cast<const uint16_t*>(a.data) + a_offset, a_step,
                  static_cast<const uint16_t*>(b.data) + b_offset, b_step,
                  static_cast<uint16_t*>(out) + out_offset, row);
    }
  };
  // Merge dimension d into d + 1 wherever both operands step through them as through one
  // (stride[d] == stride[d + 1] * dims[d + 1]); size-1 dimensions drop out.
  std::vector<int64_t> extents, a_strides, b_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!extents.empty() && a_strides.back() == a.strides[d] * dims[d] &&
        b_strides.back() == b.strides[d] * dims[d]) {
      extents.back() *= dims[d];
      a_strides.back() = a.strides[d];
      b_strides.back() = b.strides[d];
      continue;
    }
    extents.push_back(dims[d]);
    a_strides.push_back(a.strides[d]);
    b_strides.push_back(b.strides[d]);
  }
  if (extents.empty()) {  // one element
    run_row(0, 0, 0, 0, 0, 1);
    return;
  }
  const int64_t row = extents.back();
  const int64_t a_step = a_strides.back(), b_step = b_strides.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < extents.size(); ++d) rows *= extents[d];
  internal::ParallelFor(
      rows, std::max<int64_t>(1, internal::kElementGrain / row), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t a_offset = 0, b_offset = 0, rest = r;
          for (size_t d = extents.size() - 1; d-- > 0;) {
            const int64_t digit = rest % extents[d];
            rest /= extents[d];
            a_offset += digit * a_strides[d];
            b_offset += digit * b_strides[d];
          }
          run_row(a_offset, a_step, b_offset, b_step, r * row, row);
        }
      });
}

void CompareF32(ir::ComparisonDirection direction, const float* a, const float* b, bool* out,
                int64_t n) {
  CompareLoop(direction, a, b, out, n);
}

void CompareS32(ir::ComparisonDirection direction, const int32_t* a, const int32_t* b, bool* out,
                int64_t n) {
  CompareLoop(direction, a, b, out, n);
}

void LogicalPred(LogicalFn fn, const bool* a, const bool* b, bool* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    if (fn == LogicalFn::kAnd) {
      for (int64_t i = begin; i < end; ++i) out[i] = a[i] && b[i];
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = a[i] || b[i];
    }
  });
}

void ClampS32(const int32_t* lo, int64_t lo_stride, const int32_t* x, const int32_t* hi,
              int64_t hi_stride, int32_t* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = std::min(std::max(x[i], lo[i * lo_stride]), hi[i * hi_stride]);
    }
  });
}

void Select32(const bool* pred, const uint32_t* on_true, const uint32_t* on_false, uint32_t* out,
              int64_t n) {
  // A mask from the predicate byte, so the loop has no branch and vectorises.
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint32_t mask = 0u - static_cast<uint32_t>(pred[i]);
      out[i] = (on_true[i] & mask) | (on_false[i] & ~mask);
    }
  });
}

void Select16(const bool* pred, const uint16_t* on_true, const uint16_t* on_false, uint16_t* out,
              int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint16_t mask = static_cast<uint16_t>(0u - static_cast<uint32_t>(pred[i]));
      out[i] = static_cast<uint16_t>((on_true[i] & mask) | (on_false[i] & ~mask));
    }
  });
}

void ConvertS32ToF32(const int32_t* x, float* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<float>(x[i]);
  });
}

void ConvertPredToF32(const bool* x, float* out, int64_t n) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = x[i] ? 1.0f : 0.0f;
  });
}

void IotaS32(int32_t* out, int64_t n, int64_t stride, int64_t extent) {
  Iota(out, n, stride, extent);
}

void IotaF32(float* out, int64_t n, int64_t stride, int64_t extent) {
  Iota(out, n, stride, extent);
}

}  // namespace alpa::kernels
