// libFuzzer target: checkpoint manifests (--resume). Accepted manifests print (ManifestText) to
// text that reads back and prints the same.
#include <cstdint>

#include "checkpoint/manifest.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  auto manifest = checkpoint::ParseManifest(fuzz::Text(data, size), "fuzz");
  if (!manifest.ok()) return 0;
  fuzz::CheckReadsBack(
      "manifest", checkpoint::ManifestText(*manifest),
      [](const std::string& text) { return checkpoint::ParseManifest(text, "printed"); },
      [](const checkpoint::Manifest& read) { return checkpoint::ManifestText(read); });
  return 0;
}
