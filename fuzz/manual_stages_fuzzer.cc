// libFuzzer target: manual-stage files (--manual-stages) and a saved pipelined plan's stages.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "plan/manual_stages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  const std::string text(fuzz::Text(data, size));
  (void)plan::ParseManualStages(text, "fuzz");
  (void)plan::ParseSavedPlanStages(text, "fuzz");
  return 0;
}
