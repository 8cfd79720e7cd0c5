#include "kernels/indexing.h"

#include <algorithm>
#include <cstring>

#include "kernels/half_conversion.h"
#include "kernels/parallel_for.h"

namespace alpa::kernels {

void GatherRows(const void* table, int64_t rows, int64_t row_bytes, const int32_t* index, int64_t n,
                void* out) {
  const auto* from = static_cast<const char*>(table);
  auto* to = static_cast<char*>(out);
  const int64_t grain =
      std::max<int64_t>(1, internal::kElementGrain * 4 / std::max<int64_t>(row_bytes, 1));
  internal::ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = std::clamp<int64_t>(index[i], 0, rows - 1);
      std::memcpy(to + i * row_bytes, from + row * row_bytes, static_cast<size_t>(row_bytes));
    }
  });
}

namespace {

// Columns per chunk of a scatter-add: the work is split by columns, so that each element sums in
// index order whatever the team.
constexpr int64_t kColumnGrain = 256;

}  // namespace

void ScatterAddRowsF32(float* table, int64_t rows, int64_t width, const int32_t* index, int64_t n,
                       const float* updates) {
  internal::ParallelFor(width, kColumnGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = 0; i < n; ++i) {
      if (index[i] < 0 || index[i] >= rows) continue;
      float* row = table + index[i] * width;
      const float* update = updates + i * width;
      for (int64_t c = begin; c < end; ++c) row[c] += update[c];
    }
  });
}

void ScatterAddRows16(ir::DType dtype, void* table, int64_t rows, int64_t width,
                      const int32_t* index, int64_t n, const void* updates) {
  auto* table16 = static_cast<uint16_t*>(table);
  const auto* updates16 = static_cast<const uint16_t*>(updates);
  internal::ParallelFor(width, kColumnGrain, [&](int64_t begin, int64_t end) {
    float row[kColumnGrain], update[kColumnGrain];
    const int64_t length = end - begin;
    for (int64_t i = 0; i < n; ++i) {
      if (index[i] < 0 || index[i] >= rows) continue;
      uint16_t* target = table16 + index[i] * width + begin;
      internal::Widen16ToF32(dtype, target, row, length);
      internal::Widen16ToF32(dtype, updates16 + i * width + begin, update, length);
      for (int64_t c = 0; c < length; ++c) row[c] += update[c];
      internal::NarrowF32To16(row, dtype, target, length);
    }
  });
}

}  // namespace alpa::kernels
