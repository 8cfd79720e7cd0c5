// Test helpers for the kernels: deterministic random buffers and direct-definition references
// written independently of the library (dot as a triple loop, convolution by materialising the
// dilated and padded input and correlating it with the kernel).
#ifndef ALPA_TESTS_KERNELS_TEST_UTIL_H_
#define ALPA_TESTS_KERNELS_TEST_UTIL_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/convolution.h"

namespace alpa::kernels::testing {

// Exact reference arithmetic: integers in uint64 (wraps modulo 2^64, then truncates to T), floats
// in double, complex in complex<double>.
template <typename T>
using RefAcc = std::conditional_t<std::is_integral_v<T>, uint64_t,
                                  std::conditional_t<std::is_same_v<T, std::complex<float>> ||
                                                         std::is_same_v<T, std::complex<double>>,
                                                     std::complex<double>, double>>;

template <typename T>
RefAcc<T> ToRef(T value) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));  // sign-extend, then wrap
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return static_cast<double>(static_cast<float>(value));
  } else {
    return RefAcc<T>(value);
  }
}

template <typename T>
T FromRef(RefAcc<T> value) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return static_cast<T>(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// Small integers in [-3, 3] (complex: both parts): every sum of products the tests form stays
// exact in f32, so fast and reference paths must agree bit for bit on f32/f64/integer types.
template <typename T>
std::vector<T> RandomBuffer(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-3, 3);
  std::vector<T> values(static_cast<size_t>(count));
  for (T& value : values) {
    if constexpr (std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>) {
      const int re = dist(rng);
      value = T(re, dist(rng));
    } else if constexpr (std::is_unsigned_v<T>) {
      value = static_cast<T>(dist(rng) + 3);
    } else {
      value = static_cast<T>(static_cast<float>(dist(rng)));
    }
  }
  return values;
}

// C[b, i, j] = sum_q A[b, i, q] * B[b, q, j], the definition.
template <typename T>
std::vector<T> NaiveMatMul(int64_t batch, int64_t m, int64_t k, int64_t n, const std::vector<T>& a,
                           const std::vector<T>& b) {
  std::vector<T> c(static_cast<size_t>(batch * m * n));
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        RefAcc<T> sum(0);
        for (int64_t q = 0; q < k; ++q) {
          sum += ToRef(a[(p * m + i) * k + q]) * ToRef(b[(p * k + q) * n + j]);
        }
        c[(p * m + i) * n + j] = FromRef<T>(sum);
      }
    }
  }
  return c;
}

// Output spatial sizes by XLA's formula (the same one the kernels validate against).
inline std::vector<int64_t> OutputSpatial(const ConvolutionParams& p) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < p.input_spatial.size(); ++d) {
    const int64_t in = p.input_spatial[d], k = p.kernel_spatial[d];
    const int64_t padded =
        (in == 0 ? 0 : (in - 1) * p.lhs_dilation[d] + 1) + p.pad_low[d] + p.pad_high[d];
    const int64_t window = k == 0 ? 0 : (k - 1) * p.rhs_dilation[d] + 1;
    out.push_back(window > padded ? 0 : (padded - window) / p.strides[d] + 1);
  }
  return out;
}

// Stride 1, no padding, dilation 1 for every spatial dim; output sizes computed.
inline ConvolutionParams MakeParams(int64_t batch, int64_t in_features, int64_t out_features,
                                    std::vector<int64_t> input_spatial,
                                    std::vector<int64_t> kernel_spatial) {
  ConvolutionParams p;
  p.batch = batch;
  p.input_features = in_features;
  p.output_features = out_features;
  const size_t rank = input_spatial.size();
  p.input_spatial = std::move(input_spatial);
  p.kernel_spatial = std::move(kernel_spatial);
  p.strides.assign(rank, 1);
  p.pad_low.assign(rank, 0);
  p.pad_high.assign(rank, 0);
  p.lhs_dilation.assign(rank, 1);
  p.rhs_dilation.assign(rank, 1);
  p.output_spatial = OutputSpatial(p);
  return p;
}

inline int64_t Product(const std::vector<int64_t>& sizes) {
  int64_t product = 1;
  for (int64_t size : sizes) product *= size;
  return product;
}

// Row-major linear index of `index` in `sizes`.
inline int64_t Linear(const std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  int64_t linear = 0;
  for (size_t d = 0; d < sizes.size(); ++d) linear = linear * sizes[d] + index[d];
  return linear;
}

// Multi-index of `linear` in `sizes`.
inline std::vector<int64_t> Unlinear(int64_t linear, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = linear % sizes[d];
    linear /= sizes[d];
  }
  return index;
}

// Convolution by definition: dilate the input by lhs_dilation, pad it (negative pads crop), then
//   out[n, f, o...] = sum over c, k... of padded[n_in, g * C_in/G + c, o * stride + k * rhs_dil]
//                                          * kernel[f, c, k (reversed where asked)]
// with g = f / (C_out/G) and n_in = (f / (C_out/B)) * (N/B) + n.
template <typename T>
std::vector<T> NaiveConvolution(const ConvolutionParams& p, const std::vector<T>& input,
                                const std::vector<T>& kernel) {
  const size_t rank = p.input_spatial.size();
  std::vector<int64_t> padded_sizes(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = p.input_spatial[d];
    padded_sizes[d] =
        (in == 0 ? 0 : (in - 1) * p.lhs_dilation[d] + 1) + p.pad_low[d] + p.pad_high[d];
  }
  const int64_t in_count = Product(p.input_spatial), padded_count = Product(padded_sizes);
  const int64_t kernel_count = Product(p.kernel_spatial), out_count = Product(p.output_spatial);
  // padded[(n * C_in + c) * padded_count + q]
  std::vector<RefAcc<T>> padded(static_cast<size_t>(p.batch * p.input_features * padded_count),
                                RefAcc<T>(0));
  for (int64_t plane = 0; plane < p.batch * p.input_features; ++plane) {
    for (int64_t q = 0; q < padded_count; ++q) {
      std::vector<int64_t> index = Unlinear(q, padded_sizes);
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t t = index[d] - p.pad_low[d];  // position in the dilated input
        if (t < 0 || t % p.lhs_dilation[d] != 0 || t / p.lhs_dilation[d] >= p.input_spatial[d]) {
          inside = false;
        } else {
          index[d] = t / p.lhs_dilation[d];
        }
      }
      if (inside) {
        padded[plane * padded_count + q] =
            ToRef(input[plane * in_count + Linear(index, p.input_spatial)]);
      }
    }
  }
  const int64_t groups = p.feature_group_count, batch_groups = p.batch_group_count;
  const int64_t group_in = p.input_features / groups;
  const int64_t out_batch = p.batch / batch_groups;
  std::vector<T> output(static_cast<size_t>(out_batch * p.output_features * out_count));
  for (int64_t n = 0; n < out_batch; ++n) {
    for (int64_t f = 0; f < p.output_features; ++f) {
      const int64_t g = f / (p.output_features / groups);
      const int64_t n_in = (f / (p.output_features / batch_groups)) * out_batch + n;
      for (int64_t o = 0; o < out_count; ++o) {
        const std::vector<int64_t> out_index = Unlinear(o, p.output_spatial);
        RefAcc<T> sum(0);
        for (int64_t k = 0; k < kernel_count; ++k) {
          std::vector<int64_t> k_index = Unlinear(k, p.kernel_spatial);
          std::vector<int64_t> q(rank);
          for (size_t d = 0; d < rank; ++d) {
            q[d] = out_index[d] * p.strides[d] + k_index[d] * p.rhs_dilation[d];
            if (!p.window_reversal.empty() && p.window_reversal[d]) {
              k_index[d] = p.kernel_spatial[d] - 1 - k_index[d];
            }
          }
          for (int64_t c = 0; c < group_in; ++c) {
            sum +=
                padded[(n_in * p.input_features + g * group_in + c) * padded_count +
                       Linear(q, padded_sizes)] *
                ToRef(
                    kernel[(f * group_in + c) * kernel_count + Linear(k_index, p.kernel_spatial)]);
          }
        }
        output[(n * p.output_features + f) * out_count + o] = FromRef<T>(sum);
      }
    }
  }
  return output;
}

// Distance in representable floats between two finite floats, or two equal infinities: 0 for
// equal values (+0 and -0 included), 1 for neighbours.
inline int64_t UlpDistance(float a, float b) {
  int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  // Negative floats' bits count down from -0: map them below the positive ones.
  if (x < 0) x = std::numeric_limits<int32_t>::min() - x;
  if (y < 0) y = std::numeric_limits<int32_t>::min() - y;
  return std::abs(static_cast<int64_t>(x) - static_cast<int64_t>(y));
}

}  // namespace alpa::kernels::testing

#endif  // ALPA_TESTS_KERNELS_TEST_UTIL_H_
