// Strided copies against index-by-index definitions: broadcast, transpose, reverse (negative
// strides), a write into a strided output (pad's interior), merged dimensions, bad views.
#include "kernels/strided_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace alpa::kernels {
namespace {

std::vector<int32_t> Iota(int64_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  return values;
}

TEST(StridedCopyTest, BroadcastRepeatsRowsAndElements) {
  const std::vector<int32_t> in = Iota(3);
  std::vector<int32_t> rows(6), columns(6);
  // [3] -> [2, 3] (dimension 1): every row is the input.
  ASSERT_TRUE(StridedCopy(4, {{2, 3}, {0, 1}, {3, 1}}, in.data(), rows.data()).ok());
  EXPECT_EQ(rows, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  // [3] -> [3, 2] (dimension 0): each element fills a row.
  ASSERT_TRUE(StridedCopy(4, {{3, 2}, {1, 0}, {2, 1}}, in.data(), columns.data()).ok());
  EXPECT_EQ(columns, (std::vector<int32_t>{0, 0, 1, 1, 2, 2}));
}

TEST(StridedCopyTest, TransposeAndReverseOfALargeArray) {
  // [301, 257] transposed to [257, 301] and reversed along both dimensions: several chunks.
  const int64_t rows = 301, cols = 257;
  const std::vector<int32_t> in = Iota(rows * cols);
  std::vector<int32_t> transposed(in.size()), reversed(in.size());
  ASSERT_TRUE(
      StridedCopy(4, {{cols, rows}, {1, cols}, {rows, 1}}, in.data(), transposed.data()).ok());
  ASSERT_TRUE(StridedCopy(4, {{rows, cols}, {-cols, -1}, {cols, 1}}, in.data() + in.size() - 1,
                          reversed.data())
                  .ok());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(transposed[static_cast<size_t>(c * rows + r)],
                in[static_cast<size_t>(r * cols + c)]);
      ASSERT_EQ(reversed[static_cast<size_t>(r * cols + c)],
                in[static_cast<size_t>((rows - 1 - r) * cols + (cols - 1 - c))]);
    }
  }
}

TEST(StridedCopyTest, WritesIntoAStridedOutputAndFills) {
  // [2, 2] into every other element of a [3, 3] filled with -1 (pad with interior 1).
  const std::vector<int32_t> in = Iota(4);
  std::vector<int32_t> out(9);
  const int32_t fill = -1;
  ASSERT_TRUE(Fill(4, &fill, out.data(), 9).ok());
  ASSERT_TRUE(StridedCopy(4, {{2, 2}, {2, 1}, {6, 2}}, in.data(), out.data()).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{0, -1, 1, -1, -1, -1, 2, -1, 3}));
}

TEST(StridedCopyTest, ElementsOfEverySizeAndEmptyViews) {
  const std::vector<int64_t> in = {1, 2, 3};
  std::vector<int64_t> out(3);
  ASSERT_TRUE(StridedCopy(8, {{1, 3, 1}, {3, 1, 1}, {3, 1, 1}}, in.data(), out.data()).ok());
  EXPECT_EQ(out, in);
  const std::vector<uint8_t> bytes = {7, 8};
  std::vector<uint8_t> swapped(2);
  ASSERT_TRUE(StridedCopy(1, {{2}, {-1}, {1}}, bytes.data() + 1, swapped.data()).ok());
  EXPECT_EQ(swapped, (std::vector<uint8_t>{8, 7}));
  EXPECT_TRUE(StridedCopy(4, {{0, 5}, {5, 1}, {5, 1}}, nullptr, nullptr).ok());
}

TEST(StridedCopyTest, MalformedViewsAreErrors) {
  int32_t value = 0;
  EXPECT_FALSE(StridedCopy(4, {{2, 2}, {1}, {2, 1}}, &value, &value).ok());
  EXPECT_FALSE(StridedCopy(4, {{-1}, {1}, {1}}, &value, &value).ok());
  EXPECT_FALSE(StridedCopy(3, {{1}, {1}, {1}}, &value, &value).ok());
  EXPECT_FALSE(Fill(3, &value, &value, 1).ok());
}

}  // namespace
}  // namespace alpa::kernels
