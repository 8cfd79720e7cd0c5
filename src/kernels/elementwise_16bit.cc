// The f16 and bf16 elementwise kernels of elementwise.h, and the entry points over any float
// type that choose between them and the f32 ones. The 16-bit kernels: blocks of kBlock elements
// widened into f32 buffers on the stack, the f32 kernel run on the block (one chunk, so on this
// thread), the result rounded into the output. A block stays in L1, so the 16-bit arrays are read
// and written once, as an f32 kernel reads and writes its arrays; `out` may alias an input because
// each block is read whole before it is written.
#include <algorithm>

#include "kernels/elementwise.h"
#include "kernels/half_conversion.h"
#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

using internal::NarrowF32To16;
using internal::Widen16ToF32;

constexpr int64_t kBlock = 1024;  // three f32 blocks: 12 KiB of stack

// body(first, length) for consecutive blocks of [0, n), the parallel loop's chunks (a whole
// number of blocks each) spread over the team.
template <typename Body>
void ForBlocks(int64_t n, const Body& body) {
  static_assert(internal::kElementGrain % kBlock == 0);
  internal::ParallelFor(n, internal::kElementGrain, [&](int64_t begin, int64_t end) {
    for (int64_t first = begin; first < end; first += kBlock) {
      body(first, std::min(kBlock, end - first));
    }
  });
}

// The element at `index` of a 16-bit buffer.
const void* At(const void* data, int64_t index) {
  return static_cast<const uint16_t*>(data) + index;
}
void* At(void* data, int64_t index) { return static_cast<uint16_t*>(data) + index; }

}  // namespace

void Unary16(UnaryFn fn, ir::DType dtype, const void* x, void* out, int64_t n) {
  ForBlocks(n, [&](int64_t first, int64_t length) {
    float in[kBlock], result[kBlock];
    Widen16ToF32(dtype, At(x, first), in, length);
    UnaryF32(fn, in, result, length);
    NarrowF32To16(result, dtype, At(out, first), length);
  });
}

void Binary16(BinaryFn fn, ir::DType dtype, const void* a, const void* b, void* out, int64_t n) {
  ForBlocks(n, [&](int64_t first, int64_t length) {
    float lhs[kBlock], rhs[kBlock], result[kBlock];
    Widen16ToF32(dtype, At(a, first), lhs, length);
    Widen16ToF32(dtype, At(b, first), rhs, length);
    BinaryF32(fn, lhs, rhs, result, length);
    NarrowF32To16(result, dtype, At(out, first), length);
  });
}

void Compare16(ir::ComparisonDirection direction, ir::DType dtype, const void* a, const void* b,
               bool* out, int64_t n) {
  ForBlocks(n, [&](int64_t first, int64_t length) {
    float lhs[kBlock], rhs[kBlock];
    Widen16ToF32(dtype, At(a, first), lhs, length);
    Widen16ToF32(dtype, At(b, first), rhs, length);
    CompareF32(direction, lhs, rhs, out + first, length);
  });
}

void Unary(UnaryFn fn, ir::DType dtype, const void* x, void* out, int64_t n) {
  if (dtype == ir::DType::kF32) {
    UnaryF32(fn, static_cast<const float*>(x), static_cast<float*>(out), n);
  } else {
    Unary16(fn, dtype, x, out, n);
  }
}

void Binary(BinaryFn fn, ir::DType dtype, const void* a, const void* b, void* out, int64_t n) {
  if (dtype == ir::DType::kF32) {
    BinaryF32(fn, static_cast<const float*>(a), static_cast<const float*>(b),
              static_cast<float*>(out), n);
  } else {
    Binary16(fn, dtype, a, b, out, n);
  }
}

void Compare(ir::ComparisonDirection direction, ir::DType dtype, const void* a, const void* b,
             bool* out, int64_t n) {
  if (dtype == ir::DType::kF32) {
    CompareF32(direction, static_cast<const float*>(a), static_cast<const float*>(b), out, n);
  } else if (dtype == ir::DType::kS32) {
    CompareS32(direction, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), out, n);
  } else {
    Compare16(direction, dtype, a, b, out, n);
  }
}

void ConvertFloat(ir::DType from, const void* x, ir::DType to, void* out, int64_t n) {
  ForBlocks(n, [&](int64_t first, int64_t length) {
    float block[kBlock];
    const float* wide = block;
    if (from == ir::DType::kF32) {
      wide = static_cast<const float*>(x) + first;
    } else if (from == ir::DType::kPred) {
      ConvertPredToF32(static_cast<const bool*>(x) + first, block, length);
    } else {
      Widen16ToF32(from, At(x, first), block, length);
    }
    if (to == ir::DType::kF32) {
      std::copy(wide, wide + length, static_cast<float*>(out) + first);
    } else {
      NarrowF32To16(wide, to, At(out, first), length);
    }
  });
}

}  // namespace alpa::kernels
