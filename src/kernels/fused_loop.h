// A fused elementwise loop: a tree of float ops (ir/loop_fusion.h picks them) run over tiles of
// kLoopTile elements, every op of the tree on one tile before the next tile, so the values inside
// the tree stay in the cache. Over n elements it reads each input once and writes the output
// once, where the ops run one by one would read and write n elements per op.
//
// Each op runs on its tile the kernel it runs alone (RunLoopOp: elementwise.h's Unary, Binary,
// Compare, Select or ConvertFloat; the 16-bit ones round each result to 16 bits), so a loop's
// output equals, byte for byte, that of its ops run one after the other. An input is an array of
// the loop's dimensions or a broadcast read in place (its operand read at strides that are 0
// along the dimensions the broadcast adds, ir/broadcast_folding.h), copied tile by tile into the
// cache. Tiles are split over the calling thread's OpenMP team in fixed chunks (parallel_for.h),
// so the bytes do not depend on the thread count either.
#ifndef ALPA_KERNELS_FUSED_LOOP_H_
#define ALPA_KERNELS_FUSED_LOOP_H_

#include <cstdint>
#include <vector>

#include "ir/attributes.h"
#include "ir/dtype.h"
#include "kernels/elementwise.h"

namespace alpa::kernels {

// Elements per tile: a tile of every value of a ten-op f32 loop fills 40 KiB, about a core's L1
// data cache or a small part of its L2; a multiple of every vector width, so tiles split no packet.
inline constexpr int64_t kLoopTile = 1024;

struct LoopInput {
  ir::DType dtype = ir::DType::kF32;
  // Per dimension of the loop, the stride at which the input's row-major elements are read: an
  // array of the loop's dimensions has the row-major strides, a broadcast's operand 0 along the
  // dimensions the broadcast adds (ir::BroadcastReadStrides). Increasing dimensions, so that the
  // innermost stride left once dimensions are merged is 0 or 1.
  std::vector<int64_t> strides;
};

// One op of a loop. Its operands are values: value v < input count is input v, value
// input count + i is the result of op i (an earlier op).
struct LoopOp {
  enum class Kind { kUnary, kBinary, kCompare, kSelect, kConvert };
  Kind kind = Kind::kUnary;
  ir::DType dtype = ir::DType::kF32;  // of its result: f32, f16 or bf16, pred for a compare
  UnaryFn unary = UnaryFn::kNegate;   // kUnary
  BinaryFn binary = BinaryFn::kAdd;   // kBinary
  ir::ComparisonDirection direction = ir::ComparisonDirection::kEq;  // kCompare
  // Operands: one (unary, convert), two (binary, compare) or three (select: predicate, on true,
  // on false).
  std::vector<int32_t> operands;
};

struct Loop {
  std::vector<int64_t> dims;  // of every op and of the output
  std::vector<LoopInput> inputs;
  std::vector<LoopOp> ops;  // in an order that computes operands first; the last is the output

  int32_t input_count() const { return static_cast<int32_t>(inputs.size()); }
  // The values computed inside the loop (its ops but the output), never written to memory.
  int32_t fused_values() const { return static_cast<int32_t>(ops.size()) - 1; }
};

// `op` over `count` elements by the kernel it runs alone: operand k's elements at operands[k],
// operand 0's of `operand_dtype` (a compare's and a convert's type; the others are op.dtype or
// pred).
void RunLoopOp(const LoopOp& op, ir::DType operand_dtype, const void* const* operands, void* out,
               int64_t count);

// The output (the last op's value) for the inputs' data, `inputs[k]` input k's.
void RunLoop(const Loop& loop, const std::vector<const void*>& inputs, void* out);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_FUSED_LOOP_H_
