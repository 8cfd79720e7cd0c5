// Fingerprints: short, stable hashes that tell whether two texts (a module, a checkpoint's list of
// values) are the same, printed in messages and saved in plan documents and checkpoints.
#ifndef ALPA_SUPPORT_FINGERPRINT_H_
#define ALPA_SUPPORT_FINGERPRINT_H_

#include <string>
#include <string_view>

namespace alpa {

// 16 hex digits of a 64-bit FNV-1a hash of `text`:
//   h = 1469598103934665603; for each byte b: h = (h xor b) * 1099511628211 (mod 2^64)
// The start value is one digit short of FNV's offset basis (14695981039346656037); it stays, as
// the plan documents saved so far carry fingerprints made with it.
std::string FingerprintHex(std::string_view text);

}  // namespace alpa

#endif  // ALPA_SUPPORT_FINGERPRINT_H_
