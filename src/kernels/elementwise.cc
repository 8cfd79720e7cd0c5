#include "kernels/elementwise.h"

#include <algorithm>

#include "kernels/parallel_for.h"
#include "kernels/vector_math.h"

namespace alpa::kernels {
namespace {

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

template <typename T>
void Iota(T* out, int64_t n, int64_t stride, int64_t extent) {
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>((i / stride) % extent);
  });
}

}  // namespace

void UnaryF32(UnaryFn fn, const float* x, float* out, int64_t n) {
  const internal::VectorMath& math = internal::BestVectorMath();
  ForChunks(
      n, [&](int64_t begin, int64_t end) { math.unary(fn, x + begin, out + begin, end - begin); });
}

void BinaryF32(BinaryFn fn, const float* a, const float* b, float* out, int64_t n) {
  const internal::VectorMath& math = internal::BestVectorMath();
  ForChunks(n, [&](int64_t begin, int64_t end) {
    math.binary(fn, a + begin, b + begin, out + begin, end - begin);
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

std::string_view VectorInstructionSet() {
  return internal::VectorIsaName(internal::BestVectorMath().isa);
}

}  // namespace alpa::kernels
