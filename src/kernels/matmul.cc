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

// Where element (row, col) of a batch's rows x cols matrix lies: row-major, or stored transposed.
struct MatrixStrides {
  int64_t row, col;
};
MatrixStrides StridesOf(int64_t rows, int64_t cols, MatrixLayout layout) {
  return layout == MatrixLayout::kRowMajor ? MatrixStrides{cols, 1} : MatrixStrides{1, rows};
}

// The operands of one problem: sizes, layouts, buffers.
template <typename T>
struct Problem {
  int64_t batch, m, k, n;
  const T* a;
  const T* b;
  T* c;
  MatrixLayout a_layout, b_layout;
};

// Exact loop in i-k-j order (the inner loop over a row of B and of C, unit-stride when B is
// row-major), accumulating a row of C in Accumulator<T> and storing it once.
template <typename T>
void LoopMatMul(const Problem<T>& p) {
  const MatrixStrides as = StridesOf(p.m, p.k, p.a_layout);
  const MatrixStrides bs = StridesOf(p.k, p.n, p.b_layout);
  std::vector<Accumulator<T>> row(static_cast<size_t>(p.n));
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    const T* a = p.a + batch * p.m * p.k;
    const T* b = p.b + batch * p.k * p.n;
    T* c = p.c + batch * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      std::fill(row.begin(), row.end(), Accumulator<T>(0));
      for (int64_t q = 0; q < p.k; ++q) {
        const Accumulator<T> a_iq = Widen(a[i * as.row + q * as.col]);
        const T* b_row = b + q * bs.row;
        for (int64_t j = 0; j < p.n; ++j) row[j] += a_iq * Widen(b_row[j * bs.col]);
      }
      for (int64_t j = 0; j < p.n; ++j) c[i * p.n + j] = static_cast<T>(row[j]);
    }
  }
}

// f64 and complex: Eigen's blocked product on strided views, one batch at a time.
template <typename T>
void EigenMatMul(const Problem<T>& p) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strided = Eigen::Map<const Matrix, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
  auto view = [](const T* data, int64_t rows, int64_t cols, MatrixLayout layout) {
    const MatrixStrides strides = StridesOf(rows, cols, layout);
    return Strided(data, rows, cols,
                   Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(strides.row, strides.col));
  };
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    Eigen::Map<Matrix> c(p.c + batch * p.m * p.n, p.m, p.n);
    c.noalias() = view(p.a + batch * p.m * p.k, p.m, p.k, p.a_layout) *
                  view(p.b + batch * p.k * p.n, p.k, p.n, p.b_layout);
  }
}

// f32 through oneDNN, or the exact loop where oneDNN rejects the shape.
Status F32MatMul(const Problem<float>& p) {
  Status status = internal::OneDnnMatMul(ir::DType::kF32, p.batch, p.m, p.k, p.n, p.a, p.b, p.c,
                                         p.a_layout, p.b_layout);
  if (status.code() == StatusCode::kUnimplemented) {
    LoopMatMul(p);
    return Status::Ok();
  }
  return status;
}

// f16/bf16 through oneDNN's 16-bit kernel where this CPU has one (bf16 here: about twice the f32
// rate); elsewhere widened to f32 in per-thread scratch (keeping each operand's layout) and
// rounded once. Both sum in f32.
template <typename T>
Status HalfMatMul(ir::DType dtype, const Problem<T>& p) {
  Status status =
      internal::OneDnnMatMul(dtype, p.batch, p.m, p.k, p.n, p.a, p.b, p.c, p.a_layout, p.b_layout);
  if (status.code() != StatusCode::kUnimplemented) return status;
  return internal::RunWidenedToF32<T>(
      p.a, p.batch * p.m * p.k, p.b, p.batch * p.k * p.n, p.c, p.batch * p.m * p.n,
      [&](const float* a32, const float* b32, float* c32) {
        return F32MatMul({p.batch, p.m, p.k, p.n, a32, b32, c32, p.a_layout, p.b_layout});
      });
}

template <typename T>
Status TypedMatMul(ir::DType dtype, const Problem<T>& p) {
  if constexpr (std::is_same_v<T, float>) {
    return F32MatMul(p);
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return HalfMatMul<T>(dtype, p);
  } else if constexpr (std::is_integral_v<T>) {
    LoopMatMul(p);
    return Status::Ok();
  } else {
    EigenMatMul(p);
    return Status::Ok();
  }
}

// x * y without overflow, or false.
bool CheckedProduct(int64_t x, int64_t y, int64_t* product) {
  return !__builtin_mul_overflow(x, y, product);
}

}  // namespace

Status BatchMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                   const void* b, void* c, MatrixLayout a_layout, MatrixLayout b_layout) {
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
    return TypedMatMul<T>(
        dtype, Problem<T>{batch, m, k, n, static_cast<const T*>(a), static_cast<const T*>(b),
                          static_cast<T*>(c), a_layout, b_layout});
  });
}

}  // namespace alpa::kernels
