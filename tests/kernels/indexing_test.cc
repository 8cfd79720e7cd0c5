// The row gather and row scatter-add against their definitions: gather clamps, scatter skips
// out-of-range indices and adds repeated ones in index order, whatever the OpenMP team size.
#include "kernels/indexing.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

namespace alpa::kernels {
namespace {

constexpr int64_t kRows = 4;
constexpr int64_t kWidth = 700;  // several column chunks of the scatter

std::vector<float> Table() {
  std::vector<float> table(kRows * kWidth);
  for (size_t i = 0; i < table.size(); ++i) table[i] = 0.5f * static_cast<float>(i);
  return table;
}

TEST(IndexingTest, GatherRowsClampsEachIndexIntoTheTable) {
  const std::vector<float> table = Table();
  const std::vector<int32_t> index = {2, -3, 9, 0, 2};  // -3 -> row 0, 9 -> row 3
  std::vector<float> out(index.size() * kWidth);
  GatherRows(table.data(), kRows, kWidth * sizeof(float), index.data(),
             static_cast<int64_t>(index.size()), out.data());
  const int64_t rows_read[] = {2, 0, 3, 0, 2};
  for (size_t i = 0; i < index.size(); ++i) {
    for (int64_t c = 0; c < kWidth; ++c) {
      ASSERT_EQ(out[i * kWidth + c], table[rows_read[i] * kWidth + c]) << i << ", " << c;
    }
  }
}

// 1e8 + 1 + 1 - 1e8 in that order is 0 in f32 (each 1 is lost against 1e8), in another order 2:
// the kernel must add in index order, as the interpreter does.
TEST(IndexingTest, ScatterAddRowsSkipsOutOfRangeAndAddsInIndexOrder) {
  const std::vector<int32_t> index = {1, 1, 1, 1, -1, 4, 3};
  const float values[] = {1e8f, 1, 1, -1e8f, 5, 6, 7};
  std::vector<float> updates(index.size() * kWidth);
  for (size_t i = 0; i < index.size(); ++i) {
    for (int64_t c = 0; c < kWidth; ++c) updates[i * kWidth + c] = values[i];
  }
  for (int threads : {1, 2}) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> table(kRows * kWidth, 0.0f);
    ScatterAddRowsF32(table.data(), kRows, kWidth, index.data(), static_cast<int64_t>(index.size()),
                      updates.data());
    omp_set_num_threads(saved);
    for (int64_t c = 0; c < kWidth; ++c) {
      EXPECT_EQ(table[0 * kWidth + c], 0) << c;  // index -1 skipped
      EXPECT_EQ(table[1 * kWidth + c], 0) << c;  // ((1e8 + 1) + 1) - 1e8 in f32
      EXPECT_EQ(table[2 * kWidth + c], 0) << c;
      EXPECT_EQ(table[3 * kWidth + c], 7) << c;  // index 4 skipped, 3 kept
    }
  }
}

}  // namespace
}  // namespace alpa::kernels
