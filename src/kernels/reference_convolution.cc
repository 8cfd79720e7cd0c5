// The exact direct convolution loop: XLA's definition evaluated term by term (see the formulas in
// kernels/convolution.h). Handles every case the oneDNN path does not.
#include "kernels/reference_convolution.h"

#include <Eigen/Core>
#include <vector>

#include "kernels/element_type.h"

namespace alpa::kernels::internal {
namespace {

int64_t Product(const std::vector<int64_t>& sizes) {
  int64_t product = 1;
  for (int64_t size : sizes) product *= size;
  return product;
}

// Row-major strides of `sizes`.
std::vector<int64_t> Strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * sizes[d + 1];
  }
  return strides;
}

// Advances the odometer `index` over `sizes` (last dimension fastest).
void Bump(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < sizes[d]) return;
    index[d] = 0;
  }
}

template <typename T>
void TypedDirectConvolution(const ConvolutionParams& p, const T* input, const T* kernel,
                            T* output) {
  const size_t rank = p.input_spatial.size();
  const int64_t in_count = Product(p.input_spatial);
  const int64_t kernel_count = Product(p.kernel_spatial);
  const int64_t out_count = Product(p.output_spatial);
  const std::vector<int64_t> in_strides = Strides(p.input_spatial);
  const std::vector<int64_t> kernel_strides = Strides(p.kernel_spatial);

  // rows[d][o * K_d + k]: the input index read along dim d by output o and kernel tap k, or -1
  // for padding and lhs-dilation holes.
  //   u = o * stride - pad_low + k * rhs_dilation; index = u / lhs_dilation if exact and inside.
  std::vector<std::vector<int64_t>> rows(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t taps = p.kernel_spatial[d];
    rows[d].assign(static_cast<size_t>(p.output_spatial[d] * taps), -1);
    for (int64_t o = 0; o < p.output_spatial[d]; ++o) {
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t u = o * p.strides[d] - p.pad_low[d] + k * p.rhs_dilation[d];
        if (u < 0 || u % p.lhs_dilation[d] != 0) continue;
        const int64_t index = u / p.lhs_dilation[d];
        if (index < p.input_spatial[d]) rows[d][o * taps + k] = index;
      }
    }
  }
  // Offset of kernel tap k_lin inside one [K...] block, with window reversal applied.
  std::vector<int64_t> kernel_offsets(static_cast<size_t>(kernel_count));
  {
    std::vector<int64_t> k_index(rank, 0);
    for (int64_t k_lin = 0; k_lin < kernel_count; ++k_lin, Bump(k_index, p.kernel_spatial)) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        const bool reversed = !p.window_reversal.empty() && p.window_reversal[d];
        offset +=
            (reversed ? p.kernel_spatial[d] - 1 - k_index[d] : k_index[d]) * kernel_strides[d];
      }
      kernel_offsets[k_lin] = offset;
    }
  }

  const int64_t group_in = p.input_features / p.feature_group_count;
  const int64_t feature_group_out = p.output_features / p.feature_group_count;
  const int64_t batch_group_out = p.output_features / p.batch_group_count;
  const int64_t out_batch = p.batch / p.batch_group_count;
  std::vector<int64_t> o_index(rank), k_index(rank);
  for (int64_t n = 0; n < out_batch; ++n) {
    for (int64_t f = 0; f < p.output_features; ++f) {
      const int64_t group = f / feature_group_out;
      const int64_t in_batch = (f / batch_group_out) * out_batch + n;
      const T* in_base = input + (in_batch * p.input_features + group * group_in) * in_count;
      const T* kernel_base = kernel + f * group_in * kernel_count;
      T* out = output + (n * p.output_features + f) * out_count;
      std::fill(o_index.begin(), o_index.end(), 0);
      for (int64_t o_lin = 0; o_lin < out_count; ++o_lin, Bump(o_index, p.output_spatial)) {
        Accumulator<T> sum(0);
        std::fill(k_index.begin(), k_index.end(), 0);
        for (int64_t k_lin = 0; k_lin < kernel_count; ++k_lin, Bump(k_index, p.kernel_spatial)) {
          int64_t in_offset = 0;
          bool inside = true;
          for (size_t d = 0; d < rank && inside; ++d) {
            const int64_t index = rows[d][o_index[d] * p.kernel_spatial[d] + k_index[d]];
            inside = index >= 0;
            in_offset += index * in_strides[d];
          }
          if (!inside) continue;
          const T* in = in_base + in_offset;
          const T* ker = kernel_base + kernel_offsets[k_lin];
          for (int64_t c = 0; c < group_in; ++c) {
            sum += Widen(in[c * in_count]) * Widen(ker[c * kernel_count]);
          }
        }
        out[o_lin] = static_cast<T>(sum);
      }
    }
  }
}

}  // namespace

Status DirectConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                         const void* kernel, void* output) {
  return VisitKernelDType(dtype, "Convolution", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    TypedDirectConvolution<T>(params, static_cast<const T*>(input), static_cast<const T*>(kernel),
                              static_cast<T*>(output));
    return Status::Ok();
  });
}

}  // namespace alpa::kernels::internal
