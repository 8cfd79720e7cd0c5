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

// out[i] = pred[i] ? on_true[i] : on_false[i], through a mask from the predicate byte, so the
// loop has no branch and vectorises.
template <typename Bits>
void SelectBits(const bool* pred, const void* on_true, const void* on_false, void* out, int64_t n) {
  const Bits* if_true = static_cast<const Bits*>(on_true);
  const Bits* if_false = static_cast<const Bits*>(on_false);
  Bits* selected = static_cast<Bits*>(out);
  ForChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Bits mask = static_cast<Bits>(0u - static_cast<uint32_t>(pred[i]));
      selected[i] = static_cast<Bits>((if_true[i] & mask) | (if_false[i] & ~mask));
    }
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

void Select(ir::DType dtype, const bool* pred, const void* on_true, const void* on_false, void* out,
            int64_t n) {
  if (ir::DTypeByteSize(dtype) == 4) {
    SelectBits<uint32_t>(pred, on_true, on_false, out, n);
  } else {
    SelectBits<uint16_t>(pred, on_true, on_false, out, n);
  }
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
