#include "kernels/fused_loop.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

// One op over `length` elements of its operands' tiles into `out`.
void RunOp(const LoopOp& op, ir::DType dtype, const std::byte* a, const std::byte* b,
           std::byte* out, int64_t length) {
  if (dtype == ir::DType::kF32) {
    if (op.binary) {
      BinaryF32(op.binary_fn, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                reinterpret_cast<float*>(out), length);
    } else {
      UnaryF32(op.unary, reinterpret_cast<const float*>(a), reinterpret_cast<float*>(out), length);
    }
  } else if (op.binary) {
    Binary16(op.binary_fn, dtype, a, b, out, length);
  } else {
    Unary16(op.unary, dtype, a, out, length);
  }
}

// `length` copies of the element at `value` (4 or 2 bytes) into `tile`.
void FillTile(const void* value, int64_t element, std::byte* tile, int64_t length) {
  if (element == 4) {
    uint32_t bits;
    std::memcpy(&bits, value, 4);
    std::fill_n(reinterpret_cast<uint32_t*>(tile), length, bits);
  } else {
    uint16_t bits;
    std::memcpy(&bits, value, 2);
    std::fill_n(reinterpret_cast<uint16_t*>(tile), length, bits);
  }
}

}  // namespace

void RunLoop(const Loop& loop, const std::vector<const void*>& inputs, void* out, int64_t n) {
  const int64_t element = ir::DTypeByteSize(loop.dtype);
  const size_t input_count = inputs.size();
  const size_t value_count = input_count + loop.ops.size();
  internal::ParallelFor(n, internal::kElementGrain, [&](int64_t begin, int64_t end) {
    // A scratch tile per value: a repeated input's is filled once per chunk, an op's holds its
    // result for the current tile (the last op writes the output instead, and the arrays are
    // read where they are). A chunk shorter than a tile needs tiles of its length only.
    const int64_t tile = std::min(kLoopTile, end - begin);
    const size_t tile_bytes = static_cast<size_t>(tile * element);
    const std::unique_ptr<std::byte[]> scratch(new std::byte[value_count * tile_bytes]);
    auto scratch_tile = [&](size_t value) { return scratch.get() + value * tile_bytes; };
    for (size_t k = 0; k < input_count; ++k) {
      if (loop.repeated[k]) FillTile(inputs[k], element, scratch_tile(k), tile);
    }
    std::vector<const std::byte*> at(value_count);
    for (int64_t start = begin; start < end; start += tile) {
      const int64_t length = std::min(tile, end - start);
      for (size_t k = 0; k < input_count; ++k) {
        at[k] = loop.repeated[k] ? scratch_tile(k)
                                 : static_cast<const std::byte*>(inputs[k]) + start * element;
      }
      for (size_t i = 0; i < loop.ops.size(); ++i) {
        const LoopOp& op = loop.ops[i];
        std::byte* result = i + 1 == loop.ops.size()
                                ? static_cast<std::byte*>(out) + start * element
                                : scratch_tile(input_count + i);
        RunOp(op, loop.dtype, at[static_cast<size_t>(op.a)],
              op.binary ? at[static_cast<size_t>(op.b)] : nullptr, result, length);
        at[input_count + i] = result;
      }
    }
  });
}

}  // namespace alpa::kernels
