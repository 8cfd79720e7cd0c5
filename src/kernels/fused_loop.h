// A fused elementwise loop: a tree of unary and binary float ops (ir/loop_fusion.h picks them)
// run over tiles of kLoopTile elements, every op of the tree on one tile before the next tile,
// so the values inside the tree stay in the cache. Over n elements it reads each input once and
// writes the output once, where the ops run one by one would read and write n elements per op.
//
// Each op runs on its tile the kernel it runs alone (elementwise.h: UnaryF32 and BinaryF32, or
// Unary16 and Binary16, which round each op's result to 16 bits), so a loop's output equals,
// byte for byte, that of its ops run one after the other. Tiles are split over the calling
// thread's OpenMP team in fixed chunks (parallel_for.h), so the bytes do not depend on the thread
// count either.
#ifndef ALPA_KERNELS_FUSED_LOOP_H_
#define ALPA_KERNELS_FUSED_LOOP_H_

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "kernels/elementwise.h"

namespace alpa::kernels {

// Elements per tile: a tile of every value of a ten-op f32 loop fills 40 KiB, about a core's L1
// data cache or a small part of its L2; a multiple of every vector width, so tiles split no packet.
inline constexpr int64_t kLoopTile = 1024;

// One op of a loop. Its operands are values: value v < input count is input v, value
// input count + i is the result of op i (an earlier op).
struct LoopOp {
  bool binary = false;
  UnaryFn unary = UnaryFn::kNegate;     // when !binary
  BinaryFn binary_fn = BinaryFn::kAdd;  // when binary
  int32_t a = 0;
  int32_t b = 0;  // when binary
};

struct Loop {
  ir::DType dtype = ir::DType::kF32;  // of every input, op and the output: f32, f16 or bf16
  // Per input: whether it is one element read for every element (a broadcast scalar) rather
  // than an array of the output's length.
  std::vector<bool> repeated;
  std::vector<LoopOp> ops;  // in an order that computes operands first; the last is the output

  int32_t input_count() const { return static_cast<int32_t>(repeated.size()); }
};

// out[i] = the last op's value at element i, for i < n; inputs[k] is input k's data.
void RunLoop(const Loop& loop, const std::vector<const void*>& inputs, void* out, int64_t n);

}  // namespace alpa::kernels

#endif  // ALPA_KERNELS_FUSED_LOOP_H_
