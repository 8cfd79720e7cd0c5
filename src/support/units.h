// Human-readable quantities for reports: 1536 bytes -> "1.50 KiB", 2.5e9 FLOP -> "2.50 GFLOP".
#ifndef ALPA_SUPPORT_UNITS_H_
#define ALPA_SUPPORT_UNITS_H_

#include <cstdint>
#include <string>

namespace alpa {

// Binary prefixes (KiB = 1024 B ... PiB), three significant digits; below 1 KiB exact ("12 B").
std::string FormatBytes(int64_t bytes);

// Decimal prefixes (k = 1e3 ... E = 1e18) with three significant digits, then `unit`:
// FormatDecimal(2.5e9, "FLOP") == "2.50 GFLOP", FormatDecimal(12, "FLOP") == "12 FLOP".
std::string FormatDecimal(double value, const std::string& unit);

// Seconds with a unit that keeps three significant digits: "850 us", "12.3 ms", "4.20 s".
std::string FormatSeconds(double seconds);

}  // namespace alpa

#endif  // ALPA_SUPPORT_UNITS_H_
