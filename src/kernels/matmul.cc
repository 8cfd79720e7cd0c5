#include "kernels/matmul.h"

#include <Eigen/Core>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/element_type.h"
#include "kernels/onednn.h"

namespace alpa::kernels {
namespace {

using internal::Accumulator;
using internal::Widen;

// Exact loop in i-k-j order (unit-stride inner loop over the row of B and of C), accumulating a
// row of C in Accumulator<T> and storing it once.
template <typename T>
void LoopMatMul(int64_t batch, int64_t m, int64_t k, int64_t n, const T* a, const T* b, T* c) {
  std::vector<Accumulator<T>> row(static_cast<size_t>(n));
  for (int64_t p = 0; p < batch; ++p) {
    const T* ap = a + p * m * k;
    const T* bp = b + p * k * n;
    T* cp = c + p * m * n;
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), Accumulator<T>(0));
      for (int64_t q = 0; q < k; ++q) {
        const Accumulator<T> a_iq = Widen(ap[i * k + q]);
        const T* b_row = bp + q * n;
        for (int64_t j = 0; j < n; ++j) row[j] += a_iq * Widen(b_row[j]);
      }
      for (int64_t j = 0; j < n; ++j) cp[i * n + j] = static_cast<T>(row[j]);
    }
  }
}

// f64 and complex: Eigen's blocked product on row-major views, one batch at a time.
template <typename T>
void EigenMatMul(int64_t batch, int64_t m, int64_t k, int64_t n, const T* a, const T* b, T* c) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (int64_t p = 0; p < batch; ++p) {
    Eigen::Map<const Matrix> ap(a + p * m * k, m, k);
    Eigen::Map<const Matrix> bp(b + p * k * n, k, n);
    Eigen::Map<Matrix> cp(c + p * m * n, m, n);
    cp.noalias() = ap * bp;
  }
}

// f32 through oneDNN, or the exact loop where oneDNN rejects the shape.
Status F32MatMul(int64_t batch, int64_t m, int64_t k, int64_t n, const float* a, const float* b,
                 float* c) {
  Status status = internal::OneDnnMatMul(ir::DType::kF32, batch, m, k, n, a, b, c);
  if (status.code() == StatusCode::kUnimplemented) {
    LoopMatMul(batch, m, k, n, a, b, c);
    return Status::Ok();
  }
  return status;
}

// f16/bf16 through oneDNN's 16-bit kernel where this CPU has one (bf16 here: about twice the f32
// rate); elsewhere widened to f32 in per-thread scratch and rounded once. Both sum in f32.
template <typename T>
Status HalfMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                  const void* b, void* c) {
  Status status = internal::OneDnnMatMul(dtype, batch, m, k, n, a, b, c);
  if (status.code() != StatusCode::kUnimplemented) return status;
  return internal::RunWidenedToF32<T>(a, batch * m * k, b, batch * k * n, c, batch * m * n,
                                      [&](const float* a32, const float* b32, float* c32) {
                                        return F32MatMul(batch, m, k, n, a32, b32, c32);
                                      });
}

template <typename T>
Status TypedMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n,
                   const void* a_data, const void* b_data, void* c_data) {
  const T* a = static_cast<const T*>(a_data);
  const T* b = static_cast<const T*>(b_data);
  T* c = static_cast<T*>(c_data);
  if constexpr (std::is_same_v<T, float>) {
    return F32MatMul(batch, m, k, n, a, b, c);
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return HalfMatMul<T>(dtype, batch, m, k, n, a_data, b_data, c_data);
  } else if constexpr (std::is_integral_v<T>) {
    LoopMatMul(batch, m, k, n, a, b, c);
    return Status::Ok();
  } else {
    EigenMatMul(batch, m, k, n, a, b, c);
    return Status::Ok();
  }
}

// x * y without overflow, or false.
bool CheckedProduct(int64_t x, int64_t y, int64_t* product) {
  return !__builtin_mul_overflow(x, y, product);
}

}  // namespace

Status BatchMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                   const void* b, void* c) {
  if (batch < 0 || m < 0 || k < 0 || n < 0) {
    return InvalidArgument("BatchMatMul: negative size in batch={} m={} k={} n={}", batch, m, k, n);
  }
  int64_t bm = 0, a_count = 0, b_count = 0, c_count = 0, bk = 0;
  if (!CheckedProduct(batch, m, &bm) || !CheckedProduct(bm, k, &a_count) ||
      !CheckedProduct(batch, k, &bk) || !CheckedProduct(bk, n, &b_count) ||
      !CheckedProduct(bm, n, &c_count) ||
      !CheckedProduct(std::max({a_count, b_count, c_count}), 16, &bk)) {
    return InvalidArgument("BatchMatMul: batch={} m={} k={} n={} overflows the addressable size",
                           batch, m, k, n);
  }
  if ((a_count > 0 && a == nullptr) || (b_count > 0 && b == nullptr) ||
      (c_count > 0 && c == nullptr)) {
    return InvalidArgument("BatchMatMul: null buffer for a non-empty operand");
  }
  return internal::VisitKernelDType(dtype, "BatchMatMul", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if (c_count == 0) return Status::Ok();  // batch, m or n is 0: nothing to write
    if (k == 0) {
      // The empty sum: zeros, whatever the inputs point at.
      std::fill_n(static_cast<T*>(c), c_count, T(0));
      return Status::Ok();
    }
    return TypedMatMul<T>(dtype, batch, m, k, n, a, b, c);
  });
}

}  // namespace alpa::kernels
