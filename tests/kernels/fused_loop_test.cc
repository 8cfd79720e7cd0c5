// A fused loop against its ops run one by one over whole arrays (kernels/fused_loop.h): the same
// bytes in f32, f16 and bf16, over lengths that end inside a tile and span several chunks, with a
// repeated input and an input read twice, and whatever the OpenMP team size.
#include "kernels/fused_loop.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace alpa::kernels {
namespace {

constexpr int64_t kLength = 100003;  // three chunks of the parallel loop and part of a fourth

LoopOp Unary(UnaryFn fn, int32_t a) { return {false, fn, BinaryFn::kAdd, a, 0}; }
LoopOp Binary(BinaryFn fn, int32_t a, int32_t b) { return {true, UnaryFn::kNegate, fn, a, b}; }

// Inputs x, y (arrays) and s (one value); values 3.. are the ops':
//   out = (tanh(x) + s * y) / (sqrt(|y|) + s) - x
Loop TestLoop(ir::DType dtype) {
  Loop loop;
  loop.dtype = dtype;
  loop.repeated = {false, false, true};
  loop.ops = {
      Unary(UnaryFn::kTanh, 0),           // 3
      Binary(BinaryFn::kMultiply, 2, 1),  // 4
      Binary(BinaryFn::kAdd, 3, 4),       // 5
      Unary(UnaryFn::kAbs, 1),            // 6
      Unary(UnaryFn::kSqrt, 6),           // 7
      Binary(BinaryFn::kAdd, 7, 2),       // 8
      Binary(BinaryFn::kDivide, 5, 8),    // 9
      Binary(BinaryFn::kSubtract, 9, 0),  // 10
  };
  return loop;
}

// `values` as `dtype` (rounded to nearest even for the 16-bit types).
std::vector<std::byte> Typed(const std::vector<float>& values, ir::DType dtype) {
  std::vector<std::byte> out(values.size() * static_cast<size_t>(ir::DTypeByteSize(dtype)));
  ConvertFloat(ir::DType::kF32, values.data(), dtype, out.data(),
               static_cast<int64_t>(values.size()));
  return out;
}

// The loop's ops run one by one, each over whole arrays, the repeated input spread to an array.
std::vector<std::byte> OneByOne(const Loop& loop,
                                const std::vector<std::vector<std::byte>>& inputs) {
  const size_t bytes = static_cast<size_t>(kLength * ir::DTypeByteSize(loop.dtype));
  std::vector<std::vector<std::byte>> values;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!loop.repeated[k]) {
      values.push_back(inputs[k]);
      continue;
    }
    const size_t element = static_cast<size_t>(ir::DTypeByteSize(loop.dtype));
    std::vector<std::byte> spread(bytes);
    for (size_t i = 0; i < bytes; i += element) std::memcpy(&spread[i], inputs[k].data(), element);
    values.push_back(std::move(spread));
  }
  for (const LoopOp& op : loop.ops) {
    std::vector<std::byte> out(bytes);
    const void* a = values[static_cast<size_t>(op.a)].data();
    const void* b = op.binary ? values[static_cast<size_t>(op.b)].data() : nullptr;
    if (loop.dtype == ir::DType::kF32 && op.binary) {
      BinaryF32(op.binary_fn, static_cast<const float*>(a), static_cast<const float*>(b),
                reinterpret_cast<float*>(out.data()), kLength);
    } else if (loop.dtype == ir::DType::kF32) {
      UnaryF32(op.unary, static_cast<const float*>(a), reinterpret_cast<float*>(out.data()),
               kLength);
    } else if (op.binary) {
      Binary16(op.binary_fn, loop.dtype, a, b, out.data(), kLength);
    } else {
      Unary16(op.unary, loop.dtype, a, out.data(), kLength);
    }
    values.push_back(std::move(out));
  }
  return values.back();
}

std::vector<std::byte> Fused(const Loop& loop, const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<std::byte> out(static_cast<size_t>(kLength * ir::DTypeByteSize(loop.dtype)));
  std::vector<const void*> data;
  for (const std::vector<std::byte>& input : inputs) data.push_back(input.data());
  RunLoop(loop, data, out.data(), kLength);
  return out;
}

TEST(FusedLoopTest, GivesTheBytesOfItsOpsRunOneByOne) {
  std::vector<float> x(kLength), y(kLength);
  for (int64_t i = 0; i < kLength; ++i) {
    x[static_cast<size_t>(i)] = -3.0f + 6.0f * static_cast<float>(i) / kLength;
    y[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000) / 97.0f - 5.0f;
  }
  for (ir::DType dtype : {ir::DType::kF32, ir::DType::kF16, ir::DType::kBF16}) {
    const Loop loop = TestLoop(dtype);
    const std::vector<std::vector<std::byte>> inputs = {Typed(x, dtype), Typed(y, dtype),
                                                        Typed({0.75f}, dtype)};
    const std::vector<std::byte> expected = OneByOne(loop, inputs);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(Fused(loop, inputs), expected)
          << ir::DTypeName(dtype) << " with " << threads << " threads";
    }
  }
}

TEST(FusedLoopTest, ALoopShorterThanATileAndAOneOpLoop) {
  const std::vector<float> x = {1.0f, -2.0f, 4.0f};
  Loop loop;
  loop.repeated = {false};
  loop.ops = {Unary(UnaryFn::kNegate, 0), Binary(BinaryFn::kMultiply, 1, 0)};
  std::vector<float> out(3);
  RunLoop(loop, {x.data()}, out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{-1.0f, -4.0f, -16.0f}));
  loop.ops = {Unary(UnaryFn::kAbs, 0)};
  RunLoop(loop, {x.data()}, out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f, 4.0f}));
}

}  // namespace
}  // namespace alpa::kernels
