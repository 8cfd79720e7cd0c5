#include "support/units.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace alpa {
namespace {

// `value` (1 <= |value| < 1000) with three significant digits: 1.23, 12.3, 123.
std::string ThreeDigits(double value) {
  if (std::fabs(value) < 10) return fmt::format("{:.2f}", value);
  if (std::fabs(value) < 100) return fmt::format("{:.1f}", value);
  return fmt::format("{:.0f}", value);
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (std::llabs(bytes) < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  value /= 1024;
  while (std::fabs(value) >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", ThreeDigits(value), kUnits[unit]);
}

std::string FormatDecimal(double value, const std::string& unit) {
  static constexpr std::array<const char*, 7> kPrefixes = {"", "k", "M", "G", "T", "P", "E"};
  if (!std::isfinite(value)) return fmt::format("{} {}", value, unit);
  if (std::fabs(value) < 1000) {
    if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, unit);
    return fmt::format("{:.3g} {}", value, unit);
  }
  size_t prefix = 0;
  while (std::fabs(value) >= 1000 && prefix + 1 < kPrefixes.size()) {
    value /= 1000;
    ++prefix;
  }
  return fmt::format("{} {}{}", ThreeDigits(value), kPrefixes[prefix], unit);
}

std::string FormatSeconds(double seconds) {
  if (seconds >= 1) return fmt::format("{} s", ThreeDigits(seconds));
  if (seconds >= 1e-3) return fmt::format("{} ms", ThreeDigits(seconds * 1e3));
  if (seconds >= 1e-6) return fmt::format("{} us", ThreeDigits(seconds * 1e6));
  return fmt::format("{:.0f} ns", seconds * 1e9);
}

}  // namespace alpa
