// Kernels benchmark: BatchMatMul f32 through oneDNN next to the naive triple loop on the same
// sizes; BatchMatMul in f32, f16 and bf16 on the same shapes (the 16-bit types through oneDNN's
// own kernels where the CPU has them, else widened to f32); and a ResNet-style 3x3 convolution
// through oneDNN next to the exact reference loop. Throughput is reported as the counter GFLOP/s
// (2 flops per multiply-add); f32 with an operand read transposed beside the row-major run of the
// same sizes. The f32 vector math of the elementwise kernels runs once per
// instruction set this CPU has (kernels/vector_math.h: sse2, avx2, avx512) on the same 16 Mi
// elements, one thread, the counter Gelem (10^9 elements) per second beside each.
//
//   ninja -C <build> kernels_bench && <build>/bench/kernels_bench
//   (OMP_NUM_THREADS=1 for single-core figures)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "kernels/convolution.h"
#include "kernels/matmul.h"
#include "kernels/vector_math.h"

namespace alpa::kernels {
namespace {

std::vector<float> Filled(int64_t count, float scale) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>(i % 17) - 0.5f;
  return values;
}

void SetFlops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

// Times `run` (one BatchMatMul of m x k x n, returning its Status) and reports GFLOP/s. The first
// call JIT-compiles and caches the primitive; it is not part of the measurement.
template <typename Run>
void TimeMatMul(benchmark::State& state, int64_t m, int64_t k, int64_t n, const Run& run) {
  if (!run().ok()) {
    state.SkipWithError("BatchMatMul failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(run());
    benchmark::ClobberMemory();
  }
  SetFlops(state, 2.0 * m * k * n);
}

void BM_MatMulOneDnn(benchmark::State& state) {
  const int64_t size = state.range(0);
  const auto a = Filled(size * size, 0.01f), b = Filled(size * size, 0.02f);
  std::vector<float> c(static_cast<size_t>(size * size));
  TimeMatMul(state, size, size, size, [&] {
    return BatchMatMul(ir::DType::kF32, 1, size, size, size, a.data(), b.data(), c.data());
  });
}

// The textbook i-j-k loop (strided reads of B), as a floor to compare against.
void BM_MatMulNaive(benchmark::State& state) {
  const int64_t size = state.range(0);
  const auto a = Filled(size * size, 0.01f), b = Filled(size * size, 0.02f);
  std::vector<float> c(static_cast<size_t>(size * size));
  for (auto _ : state) {
    for (int64_t i = 0; i < size; ++i) {
      for (int64_t j = 0; j < size; ++j) {
        float sum = 0;
        for (int64_t q = 0; q < size; ++q) sum += a[i * size + q] * b[q * size + j];
        c[i * size + j] = sum;
      }
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, 2.0 * size * size * size);
}

BENCHMARK(BM_MatMulOneDnn)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MatMulNaive)->Arg(1024)->Unit(benchmark::kMillisecond)->Iterations(1);

// BatchMatMul of one dtype on m x k x n, every element 0.5 (bit patterns, so that no 16-bit C++
// type is needed here).
template <ir::DType kDType>
void BM_MatMulDType(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const uint32_t half = kDType == ir::DType::kF32   ? 0x3F000000u
                        : kDType == ir::DType::kF16 ? 0x3800u
                                                    : 0x3F00u;
  auto filled = [&](int64_t count) {
    if (kDType == ir::DType::kF32) return std::vector<uint32_t>(static_cast<size_t>(count), half);
    return std::vector<uint32_t>(static_cast<size_t>(count + 1) / 2, half << 16 | half);
  };
  const auto a = filled(m * k), b = filled(k * n);
  auto c = filled(m * n);
  TimeMatMul(state, m, k, n,
             [&] { return BatchMatMul(kDType, 1, m, k, n, a.data(), b.data(), c.data()); });
}

void MatMulShapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 1024, 1024})->Args({8192, 1024, 64})->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_MatMulDType<ir::DType::kF32>)->Name("BM_MatMulF32")->Apply(MatMulShapes);
BENCHMARK(BM_MatMulDType<ir::DType::kF16>)->Name("BM_MatMulF16")->Apply(MatMulShapes);
BENCHMARK(BM_MatMulDType<ir::DType::kBF16>)->Name("BM_MatMulBF16")->Apply(MatMulShapes);

// f32 BatchMatMul of m x k x n with A and B each row-major (0) or read transposed in place (1), as
// a backward pass's dots read them: dX = dY W^T reads W transposed, dW = X^T dY reads X so. The
// GPT benchmark's shapes (docs/cpu-engine.md), each beside its row-major run; a narrow C (n 256)
// is where oneDNN reads a transposed A slowly (runtime/fast_kernels.cc copies it there).
void BM_MatMulLayouts(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const auto a_layout = static_cast<MatrixLayout>(state.range(3));
  const auto b_layout = static_cast<MatrixLayout>(state.range(4));
  const auto a = Filled(m * k, 0.01f), b = Filled(k * n, 0.02f);
  std::vector<float> c(static_cast<size_t>(m * n));
  TimeMatMul(state, m, k, n, [&] {
    return BatchMatMul(ir::DType::kF32, 1, m, k, n, a.data(), b.data(), c.data(), a_layout,
                       b_layout);
  });
}
BENCHMARK(BM_MatMulLayouts)
    ->ArgNames({"m", "k", "n", "a_t", "b_t"})
    ->Args({4096, 2048, 1024, 0, 0})
    ->Args({4096, 2048, 1024, 1, 0})
    ->Args({1024, 2048, 4096, 0, 0})
    ->Args({1024, 2048, 4096, 1, 0})
    ->Args({1024, 1024, 512, 0, 0})
    ->Args({1024, 1024, 512, 1, 0})
    ->Args({1024, 1024, 256, 0, 0})
    ->Args({1024, 1024, 256, 1, 0})
    ->Args({2048, 4096, 1024, 0, 0})
    ->Args({2048, 4096, 1024, 0, 1})
    ->Args({2048, 1024, 4096, 0, 0})
    ->Args({2048, 1024, 4096, 0, 1})
    ->Args({1024, 256, 1024, 0, 0})
    ->Args({1024, 256, 1024, 0, 1})
    ->Unit(benchmark::kMillisecond);

// N 8, 64 -> 64 channels, 56x56, 3x3 kernel, padding 1 (a ResNet-50 stage-1 layer).
ConvolutionParams ResNetConv() {
  ConvolutionParams p;
  p.batch = 8;
  p.input_features = 64;
  p.output_features = 64;
  p.input_spatial = {56, 56};
  p.kernel_spatial = {3, 3};
  p.output_spatial = {56, 56};
  p.strides = {1, 1};
  p.pad_low = {1, 1};
  p.pad_high = {1, 1};
  p.lhs_dilation = {1, 1};
  p.rhs_dilation = {1, 1};
  return p;
}

template <bool kReference>
void BM_Conv2D(benchmark::State& state) {
  const ConvolutionParams p = ResNetConv();
  const auto input = Filled(p.batch * p.input_features * 56 * 56, 0.01f);
  const auto kernel = Filled(p.output_features * p.input_features * 9, 0.02f);
  std::vector<float> output(static_cast<size_t>(p.batch * p.output_features * 56 * 56));
  auto run = [&] {
    return kReference ? ReferenceConvolution(ir::DType::kF32, p, input.data(), kernel.data(),
                                             output.data())
                      : Convolution(ir::DType::kF32, p, input.data(), kernel.data(), output.data());
  };
  if (!run().ok()) {
    state.SkipWithError("Convolution failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(run());
    benchmark::ClobberMemory();
  }
  SetFlops(state, 2.0 * p.batch * p.output_features * 56 * 56 * p.input_features * 9);
}

BENCHMARK(BM_Conv2D<false>)->Name("BM_Conv2DOneDnn")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2D<true>)
    ->Name("BM_Conv2DReference")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// One unary or binary function (range 0: 0 exp, 1 tanh, 2 logistic, 3 multiply, 4 divide) on
// the build of vector_math.cc for `isa`, over 16 Mi elements on this thread.
void BM_VectorMath(benchmark::State& state, internal::VectorIsa isa) {
  const internal::VectorMath* math = internal::VectorMathFor(isa);
  if (math == nullptr) {
    state.SkipWithError("this CPU lacks the instruction set");
    return;
  }
  constexpr int64_t kCount = int64_t{1} << 24;
  const std::vector<float> x = Filled(kCount, -0.01f), y = Filled(kCount, 0.3f);
  std::vector<float> out(kCount);
  const UnaryFn unary[] = {UnaryFn::kExp, UnaryFn::kTanh, UnaryFn::kLogistic};
  const BinaryFn binary[] = {BinaryFn::kMultiply, BinaryFn::kDivide};
  const int64_t fn = state.range(0);
  for (auto _ : state) {
    if (fn < 3) {
      math->unary(unary[fn], x.data(), out.data(), kCount);
    } else {
      math->binary(binary[fn - 3], x.data(), y.data(), out.data(), kCount);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["Gelem"] = benchmark::Counter(
      static_cast<double>(kCount) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_VectorMath, sse2, internal::VectorIsa::kBaseline)
    ->DenseRange(0, 4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VectorMath, avx2, internal::VectorIsa::kAvx2)
    ->DenseRange(0, 4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VectorMath, avx512, internal::VectorIsa::kAvx512)
    ->DenseRange(0, 4)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace alpa::kernels

BENCHMARK_MAIN();
