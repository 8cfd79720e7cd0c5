#include "support/fingerprint.h"

#include <fmt/format.h>

#include <cstdint>

namespace alpa {

std::string FingerprintHex(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return fmt::format("{:016x}", hash);
}

}  // namespace alpa
