// The profiler's buffers: filled as the kernels expect, one set per placement.
#include "runtime/placed_buffers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace alpa::runtime {
namespace {

TEST(PlacedBuffersTest, EveryElementIsAHalfInItsDtype) {
  PlacedBuffers buffers({{ir::DType::kF32, 5},
                         {ir::DType::kF64, 3},
                         {ir::DType::kF16, 4},
                         {ir::DType::kBF16, 4},
                         {ir::DType::kS32, 2},
                         {ir::DType::kF32, 0}},
                        1);
  ASSERT_EQ(buffers.size(), 6u);
  EXPECT_EQ(static_cast<const float*>(buffers.data(0, 0))[4], 0.5f);
  EXPECT_EQ(static_cast<const double*>(buffers.data(0, 1))[2], 0.5);
  EXPECT_EQ(static_cast<const uint16_t*>(buffers.data(0, 2))[3], 0x3800);  // f16 0.5
  EXPECT_EQ(static_cast<const uint16_t*>(buffers.data(0, 3))[3], 0x3F00);  // bf16 0.5
  EXPECT_EQ(static_cast<const int32_t*>(buffers.data(0, 4))[1], 0);
  EXPECT_NE(buffers.data(0, 5), nullptr);  // an empty buffer still has an address
}

// Each placement's buffers are mappings of their own, all alive at once.
TEST(PlacedBuffersTest, EveryPlacementHasBuffersOfItsOwn) {
  constexpr int64_t kElements = int64_t{1} << 20;
  PlacedBuffers buffers({{ir::DType::kF32, kElements}, {ir::DType::kF32, kElements}}, 3);
  EXPECT_EQ(buffers.placements(), 3);
  std::set<void*> seen;
  for (int64_t placement = 0; placement < 3; ++placement) {
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_TRUE(seen.insert(buffers.data(placement, i)).second) << placement << " " << i;
      const auto* values = static_cast<const float*>(buffers.data(placement, i));
      EXPECT_EQ(values[kElements - 1], 0.5f);
    }
  }
}

}  // namespace
}  // namespace alpa::runtime
