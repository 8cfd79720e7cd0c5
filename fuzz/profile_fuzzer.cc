// libFuzzer target: profile databases (`alpa profile` output, read by --profile). Accepted
// databases print (ProfileJson) to text that reads back and prints the same.
#include <cstdint>

#include "fuzz/fuzz_check.h"
#include "runtime/profile_database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  auto database = runtime::ParseProfileJson(fuzz::Text(data, size), "fuzz");
  if (!database.ok()) return 0;
  fuzz::CheckReadsBack(
      "profile", runtime::ProfileJson(*database),
      [](const std::string& text) { return runtime::ParseProfileJson(text, "printed"); },
      [](const runtime::ProfileDatabase& read) { return runtime::ProfileJson(read); });
  return 0;
}
