// libFuzzer target: the HLO parser must never crash, hang or allocate absurdly, and whatever it
// accepts must print to text that parses again and prints identically (print∘parse idempotent).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlo/parser.h"
#include "hlo/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)alpa::hlo::ParseShape(text);
  auto module = alpa::hlo::ParseHloModule(text, "fuzz");
  if (!module.ok()) return 0;
  const std::string printed = alpa::hlo::PrintModule(**module);
  auto reparsed = alpa::hlo::ParseHloModule(printed, "printed");
  if (!reparsed.ok()) {
    std::fprintf(stderr, "printed module does not parse:\n%s\n---\n%s\n",
                 reparsed.status().message().c_str(), printed.c_str());
    std::abort();
  }
  const std::string reprinted = alpa::hlo::PrintModule(**reparsed);
  if (reprinted != printed) {
    std::fprintf(stderr, "print is not idempotent:\n%s\n---\n%s\n", printed.c_str(),
                 reprinted.c_str());
    std::abort();
  }
  return 0;
}
