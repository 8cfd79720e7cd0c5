#include "kernels/fused_loop.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

// `count` copies of the element at `value` (of `element` bytes: 4, 2 or 1) into `tile`.
void Fill(const std::byte* value, int64_t element, std::byte* tile, int64_t count) {
  if (element == 4) {
    uint32_t bits;
    std::memcpy(&bits, value, 4);
    std::fill_n(reinterpret_cast<uint32_t*>(tile), count, bits);
  } else if (element == 2) {
    uint16_t bits;
    std::memcpy(&bits, value, 2);
    std::fill_n(reinterpret_cast<uint16_t*>(tile), count, bits);
  } else {
    std::fill_n(tile, count, *value);
  }
}

// An input of a loop read in the loop's row-major order through its strides. The loop's
// dimensions are merged where the input steps through two as through one (stride[d] ==
// stride[d + 1] * dims[d + 1]), so that an array of the loop's dimensions is one contiguous run,
// a scalar's broadcast one repeated element, and a row broadcast alternates runs of whole rows
// (stride 1) and repeated elements (stride 0).
class InputReader {
 public:
  InputReader(const LoopInput& input, const std::vector<int64_t>& dims, const void* data)
      : data_(static_cast<const std::byte*>(data)), element_(ir::DTypeByteSize(input.dtype)) {
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      if (!extents_.empty() && strides_.back() == input.strides[d] * dims[d]) {
        extents_.back() *= dims[d];
        strides_.back() = input.strides[d];
        continue;
      }
      extents_.push_back(dims[d]);
      strides_.push_back(input.strides[d]);
    }
  }

  // Whether element i of the loop is element i of the data.
  bool contiguous() const { return extents_.empty() || (extents_.size() == 1 && strides_[0] == 1); }
  // Whether every element of the loop reads the data's first.
  bool repeated() const {
    return std::all_of(strides_.begin(), strides_.end(), [](int64_t s) { return s == 0; });
  }
  int64_t element() const { return element_; }
  const std::byte* At(int64_t start) const { return data_ + start * element_; }

  // Elements [start, start + count) of the loop's order into `tile`: each run along the
  // innermost merged dimension one copy (stride 1) or one fill (stride 0).
  void Read(int64_t start, int64_t count, std::byte* tile) const {
    const int64_t inner = extents_.back();
    for (int64_t index = start; index < start + count;) {
      const int64_t run = std::min(inner - index % inner, start + count - index);
      int64_t offset = 0;
      int64_t rest = index;
      for (size_t d = extents_.size(); d-- > 0;) {
        offset += rest % extents_[d] * strides_[d];
        rest /= extents_[d];
      }
      std::byte* to = tile + (index - start) * element_;
      if (strides_.back() == 1) {
        std::memcpy(to, data_ + offset * element_, static_cast<size_t>(run * element_));
      } else {
        Fill(data_ + offset * element_, element_, to, run);
      }
      index += run;
    }
  }

 private:
  const std::byte* data_;
  int64_t element_;
  std::vector<int64_t> extents_, strides_;
};

}  // namespace

void RunLoopOp(const LoopOp& op, ir::DType operand_dtype, const void* const* operands, void* out,
               int64_t count) {
  switch (op.kind) {
    case LoopOp::Kind::kUnary:
      Unary(op.unary, op.dtype, operands[0], out, count);
      break;
    case LoopOp::Kind::kBinary:
      Binary(op.binary, op.dtype, operands[0], operands[1], out, count);
      break;
    case LoopOp::Kind::kCompare:
      Compare(op.direction, operand_dtype, operands[0], operands[1], static_cast<bool*>(out),
              count);
      break;
    case LoopOp::Kind::kSelect:
      Select(op.dtype, static_cast<const bool*>(operands[0]), operands[1], operands[2], out, count);
      break;
    case LoopOp::Kind::kConvert:
      ConvertFloat(operand_dtype, operands[0], op.dtype, out, count);
      break;
  }
}

void RunLoop(const Loop& loop, const std::vector<const void*>& inputs, void* out) {
  int64_t n = 1;
  for (int64_t d : loop.dims) n *= d;
  std::vector<InputReader> readers;
  std::vector<ir::DType> value_dtypes;
  for (size_t k = 0; k < inputs.size(); ++k) {
    readers.emplace_back(loop.inputs[k], loop.dims, inputs[k]);
    value_dtypes.push_back(loop.inputs[k].dtype);
  }
  for (const LoopOp& op : loop.ops) value_dtypes.push_back(op.dtype);
  const size_t input_count = inputs.size();
  const size_t value_count = value_dtypes.size();
  const int64_t out_element = ir::DTypeByteSize(loop.ops.back().dtype);
  internal::ParallelFor(n, internal::kElementGrain, [&](int64_t begin, int64_t end) {
    // A scratch tile per value, of the widest element: a repeated input's is filled once per
    // chunk, a strided input's per tile, an op's holds its result for the current tile (the last
    // op writes the output instead, and contiguous inputs are read where they are). A chunk
    // shorter than a tile needs tiles of its length only.
    const int64_t tile = std::min(kLoopTile, end - begin);
    const size_t tile_bytes = static_cast<size_t>(tile) * 4;
    const std::unique_ptr<std::byte[]> scratch(new std::byte[value_count * tile_bytes]);
    auto scratch_tile = [&](size_t value) { return scratch.get() + value * tile_bytes; };
    for (size_t k = 0; k < input_count; ++k) {
      if (!readers[k].contiguous() && readers[k].repeated()) {
        Fill(readers[k].At(0), readers[k].element(), scratch_tile(k), tile);
      }
    }
    std::vector<const std::byte*> at(value_count);
    for (int64_t start = begin; start < end; start += tile) {
      const int64_t count = std::min(tile, end - start);
      for (size_t k = 0; k < input_count; ++k) {
        const InputReader& reader = readers[k];
        if (reader.contiguous()) {
          at[k] = reader.At(start);
          continue;
        }
        if (!reader.repeated()) reader.Read(start, count, scratch_tile(k));
        at[k] = scratch_tile(k);
      }
      for (size_t i = 0; i < loop.ops.size(); ++i) {
        std::byte* result = i + 1 == loop.ops.size()
                                ? static_cast<std::byte*>(out) + start * out_element
                                : scratch_tile(input_count + i);
        const LoopOp& op = loop.ops[i];
        const void* operands[3] = {};
        for (size_t k = 0; k < op.operands.size(); ++k) {
          operands[k] = at[static_cast<size_t>(op.operands[k])];
        }
        RunLoopOp(op, value_dtypes[static_cast<size_t>(op.operands[0])], operands, result, count);
        at[input_count + i] = result;
      }
    }
  });
}

}  // namespace alpa::kernels
