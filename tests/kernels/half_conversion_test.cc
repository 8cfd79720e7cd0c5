#include "kernels/half_conversion.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace alpa::kernels::internal {
namespace {

Eigen::half HalfOfBits(uint16_t bits) { return Eigen::numext::bit_cast<Eigen::half>(bits); }
uint16_t BitsOf(Eigen::half value) { return Eigen::numext::bit_cast<uint16_t>(value); }

// Every one of the 65536 f16 values, starting at an odd offset so that both the 8-wide loop and
// the tail run.
TEST(HalfConversionTest, WideningGivesEigensValueForEveryHalf) {
  std::vector<Eigen::half> halves(1 << 16);
  for (uint32_t bits = 0; bits < halves.size(); ++bits) halves[bits] = HalfOfBits(bits);
  constexpr int64_t kOffset = 3;
  const int64_t count = static_cast<int64_t>(halves.size()) - kOffset;
  std::vector<float> widened(static_cast<size_t>(count));
  WidenF16ToF32(halves.data() + kOffset, widened.data(), count);
  for (int64_t i = 0; i < count; ++i) {
    const float expected = static_cast<float>(halves[static_cast<size_t>(i + kOffset)]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(widened[static_cast<size_t>(i)])) << "bits " << i + kOffset;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(widened[static_cast<size_t>(i)]),
                std::bit_cast<uint32_t>(expected))
          << "bits " << i + kOffset;
    }
  }
}

// Every finite f16 value, the midpoints between neighbours (ties round to even) and a hair to
// each side of them, past the largest half (overflow to infinity), infinities and NaN.
TEST(HalfConversionTest, NarrowingRoundsToNearestEvenAsEigenDoes) {
  std::vector<float> floats = {65504.0f, 65519.99f, 65520.0f, 1e9f,   -1e9f, INFINITY, -INFINITY,
                               NAN,      -NAN,      1e-9f,    -1e-9f, 0.0f,  -0.0f};
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    const float value = static_cast<float>(HalfOfBits(static_cast<uint16_t>(bits)));
    const float next = static_cast<float>(HalfOfBits(static_cast<uint16_t>(bits + 1)));
    const float middle = value + (next - value) / 2;
    for (const float sign : {1.0f, -1.0f}) {
      floats.push_back(sign * value);
      floats.push_back(sign * middle);
      floats.push_back(sign * std::nextafter(middle, 0.0f));
      floats.push_back(sign * std::nextafter(middle, INFINITY));
    }
  }
  floats.push_back(1.0f);  // a count that is not a multiple of 8: the tail runs too
  std::vector<Eigen::half> narrowed(floats.size());
  NarrowF32ToF16(floats.data(), narrowed.data(), static_cast<int64_t>(floats.size()));
  for (size_t i = 0; i < floats.size(); ++i) {
    const Eigen::half expected = static_cast<Eigen::half>(floats[i]);
    if (Eigen::numext::isnan(expected)) {
      EXPECT_TRUE(Eigen::numext::isnan(narrowed[i])) << floats[i];
    } else {
      EXPECT_EQ(BitsOf(narrowed[i]), BitsOf(expected)) << "value " << floats[i] << " at " << i;
    }
  }
}

uint16_t BitsOf(Eigen::bfloat16 value) { return Eigen::numext::bit_cast<uint16_t>(value); }

TEST(HalfConversionTest, WideningGivesEigensValueForEveryBFloat16) {
  std::vector<Eigen::bfloat16> values(1 << 16);
  for (uint32_t bits = 0; bits < values.size(); ++bits) {
    values[bits] = Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<uint16_t>(bits));
  }
  std::vector<float> widened(values.size());
  WidenBF16ToF32(values.data(), widened.data(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(widened[i]),
              std::bit_cast<uint32_t>(static_cast<float>(values[i])))
        << "bits " << i;
  }
}

// Every bf16 value's float, the midpoints between neighbours (ties round to even) and a hair to
// each side, NaNs of both signs with payloads, and a spread of arbitrary float bit patterns: the
// bits Eigen gives, NaNs included (its quiet NaN of the input's sign).
TEST(HalfConversionTest, NarrowingToBFloat16GivesEigensBits) {
  std::vector<float> floats;
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    const uint32_t bits = high << 16;
    for (uint32_t low : {0u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      floats.push_back(std::bit_cast<float>(bits | low));
    }
  }
  for (uint64_t bits = 1; bits < (uint64_t{1} << 32); bits += 65521) {
    floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  std::vector<Eigen::bfloat16> narrowed(floats.size());
  NarrowF32ToBF16(floats.data(), narrowed.data(), static_cast<int64_t>(floats.size()));
  for (size_t i = 0; i < floats.size(); ++i) {
    EXPECT_EQ(BitsOf(narrowed[i]), BitsOf(static_cast<Eigen::bfloat16>(floats[i])))
        << "float bits " << std::bit_cast<uint32_t>(floats[i]);
  }
}

}  // namespace
}  // namespace alpa::kernels::internal
