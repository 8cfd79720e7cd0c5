#include "support/units.h"

#include <gtest/gtest.h>

namespace alpa {
namespace {

TEST(UnitsTest, Bytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(int64_t{100} << 20), "100 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 40), "3.00 TiB");
}

TEST(UnitsTest, Decimal) {
  EXPECT_EQ(FormatDecimal(12, "FLOP"), "12 FLOP");
  EXPECT_EQ(FormatDecimal(0.5, "FLOP"), "0.5 FLOP");
  EXPECT_EQ(FormatDecimal(8192, "FLOP"), "8.19 kFLOP");
  EXPECT_EQ(FormatDecimal(2.5e9, "FLOP"), "2.50 GFLOP");
  EXPECT_EQ(FormatDecimal(31.4e12, "FLOP/s"), "31.4 TFLOP/s");
}

TEST(UnitsTest, Seconds) {
  EXPECT_EQ(FormatSeconds(4.2), "4.20 s");
  EXPECT_EQ(FormatSeconds(0.0123), "12.3 ms");
  EXPECT_EQ(FormatSeconds(850e-6), "850 us");
  EXPECT_EQ(FormatSeconds(3e-8), "30 ns");
}

}  // namespace
}  // namespace alpa
