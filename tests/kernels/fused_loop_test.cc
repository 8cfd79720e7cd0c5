// A fused loop against its ops run one by one over whole arrays (kernels/fused_loop.h): the same
// bytes in f32, f16 and bf16, over lengths that end inside a tile and span several chunks, with
// inputs read as arrays, as a repeated scalar, as row and column broadcasts and as a predicate
// mask, with compares, selects and a convert among the ops, and whatever the OpenMP team size.
#include "kernels/fused_loop.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace alpa::kernels {
namespace {

// 7 x 3 x 4801 = 100821 elements: three chunks of the parallel loop and part of a fourth, rows
// that end inside tiles.
const std::vector<int64_t> kDims = {7, 3, 4801};
constexpr int64_t kLength = 7 * 3 * 4801;

LoopOp UnaryOp(UnaryFn fn, ir::DType dtype, int32_t a) {
  LoopOp op;
  op.kind = LoopOp::Kind::kUnary;
  op.dtype = dtype;
  op.unary = fn;
  op.operands = {a};
  return op;
}

LoopOp BinaryOp(BinaryFn fn, ir::DType dtype, int32_t a, int32_t b) {
  LoopOp op;
  op.kind = LoopOp::Kind::kBinary;
  op.dtype = dtype;
  op.binary = fn;
  op.operands = {a, b};
  return op;
}

LoopOp OtherOp(LoopOp::Kind kind, ir::DType dtype, std::vector<int32_t> operands) {
  LoopOp op;
  op.kind = kind;
  op.dtype = dtype;
  op.direction = ir::ComparisonDirection::kGt;
  op.operands = std::move(operands);
  return op;
}

// Inputs x, y (arrays), s (a scalar), r (one value per row: [7, 3]), c (one value per column:
// [4801]) and m (a predicate per [3, 4801]); values 6.. are the ops':
//   v = (tanh(x) + s * y) / (sqrt(|y|) + s) - r + c
//   out = convert(select(m, select(v > x, v, x), s))
Loop TestLoop(ir::DType dtype, ir::DType out_dtype) {
  using Kind = LoopOp::Kind;
  Loop loop;
  loop.dims = kDims;
  loop.inputs = {{dtype, {3 * 4801, 4801, 1}}, {dtype, {3 * 4801, 4801, 1}},
                 {dtype, {0, 0, 0}},           {dtype, {3, 1, 0}},
                 {dtype, {0, 0, 1}},           {ir::DType::kPred, {0, 4801, 1}}};
  loop.ops = {
      UnaryOp(UnaryFn::kTanh, dtype, 0),                   // 6
      BinaryOp(BinaryFn::kMultiply, dtype, 2, 1),          // 7
      BinaryOp(BinaryFn::kAdd, dtype, 6, 7),               // 8
      UnaryOp(UnaryFn::kAbs, dtype, 1),                    // 9
      UnaryOp(UnaryFn::kSqrt, dtype, 9),                   // 10
      BinaryOp(BinaryFn::kAdd, dtype, 10, 2),              // 11
      BinaryOp(BinaryFn::kDivide, dtype, 8, 11),           // 12
      BinaryOp(BinaryFn::kSubtract, dtype, 12, 3),         // 13
      BinaryOp(BinaryFn::kAdd, dtype, 13, 4),              // 14
      OtherOp(Kind::kCompare, ir::DType::kPred, {14, 0}),  // 15
      OtherOp(Kind::kSelect, dtype, {15, 14, 0}),          // 16
      OtherOp(Kind::kSelect, dtype, {5, 16, 2}),           // 17
      OtherOp(Kind::kConvert, out_dtype, {17}),            // 18
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

// Input `input` spread over the loop's dimensions, element by element through its strides.
std::vector<std::byte> Spread(const LoopInput& input, const std::vector<std::byte>& data) {
  const size_t element = static_cast<size_t>(ir::DTypeByteSize(input.dtype));
  std::vector<std::byte> spread(static_cast<size_t>(kLength) * element);
  for (int64_t i = 0; i < kLength; ++i) {
    int64_t offset = 0, rest = i;
    for (size_t d = kDims.size(); d-- > 0;) {
      offset += rest % kDims[d] * input.strides[d];
      rest /= kDims[d];
    }
    std::memcpy(&spread[static_cast<size_t>(i) * element],
                &data[static_cast<size_t>(offset) * element], element);
  }
  return spread;
}

// The loop's ops run one by one, each over whole arrays, every input spread to an array first.
std::vector<std::byte> OneByOne(const Loop& loop,
                                const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<std::vector<std::byte>> values;
  std::vector<ir::DType> dtypes;
  for (size_t k = 0; k < inputs.size(); ++k) {
    values.push_back(Spread(loop.inputs[k], inputs[k]));
    dtypes.push_back(loop.inputs[k].dtype);
  }
  for (const LoopOp& op : loop.ops) {
    std::vector<std::byte> out(static_cast<size_t>(kLength * ir::DTypeByteSize(op.dtype)));
    std::vector<const void*> operands;
    for (int32_t v : op.operands) operands.push_back(values[static_cast<size_t>(v)].data());
    RunLoopOp(op, dtypes[static_cast<size_t>(op.operands[0])], operands.data(), out.data(),
              kLength);
    values.push_back(std::move(out));
    dtypes.push_back(op.dtype);
  }
  return values.back();
}

std::vector<std::byte> Fused(const Loop& loop, const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<std::byte> out(
      static_cast<size_t>(kLength * ir::DTypeByteSize(loop.ops.back().dtype)));
  std::vector<const void*> data;
  for (const std::vector<std::byte>& input : inputs) data.push_back(input.data());
  RunLoop(loop, data, out.data());
  return out;
}

std::vector<float> Values(int64_t n, int64_t seed) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>((i * 7919 + seed) % 1000) / 97.0f - 5.0f;
  }
  return values;
}

TEST(FusedLoopTest, GivesTheBytesOfItsOpsRunOneByOne) {
  std::vector<std::byte> mask(3 * 4801);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = std::byte{i % 3 != 0};
  const std::pair<ir::DType, ir::DType> types[] = {{ir::DType::kF32, ir::DType::kBF16},
                                                   {ir::DType::kF16, ir::DType::kF32},
                                                   {ir::DType::kBF16, ir::DType::kF32}};
  for (const auto& [dtype, out_dtype] : types) {
    const Loop loop = TestLoop(dtype, out_dtype);
    const std::vector<std::vector<std::byte>> inputs = {
        Typed(Values(kLength, 1), dtype), Typed(Values(kLength, 2), dtype), Typed({0.75f}, dtype),
        Typed(Values(21, 3), dtype),      Typed(Values(4801, 4), dtype),    mask};
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
  loop.dims = {3};
  loop.inputs = {{ir::DType::kF32, {1}}};
  loop.ops = {UnaryOp(UnaryFn::kNegate, ir::DType::kF32, 0),
              BinaryOp(BinaryFn::kMultiply, ir::DType::kF32, 1, 0)};
  std::vector<float> out(3);
  RunLoop(loop, {x.data()}, out.data());
  EXPECT_EQ(out, (std::vector<float>{-1.0f, -4.0f, -16.0f}));
  EXPECT_EQ(loop.fused_values(), 1);
  loop.ops = {UnaryOp(UnaryFn::kAbs, ir::DType::kF32, 0)};
  RunLoop(loop, {x.data()}, out.data());
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f, 4.0f}));
}

}  // namespace
}  // namespace alpa::kernels
