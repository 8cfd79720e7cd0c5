// libFuzzer target: IOPDDL problem files (alpa solve), through both readers: the validated
// request, which prints (IopddlJson) to text that reads back and prints the same, and the
// document as the contest wrote it.
#include <cstdint>

#include "fuzz/fuzz_check.h"
#include "solver/iopddl_json.h"
#include "solver/iopddl_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  (void)solver::ReadIopddlDocument(fuzz::Text(data, size), "fuzz");
  auto request = solver::ParseIopddlJson(fuzz::Text(data, size), "fuzz");
  if (!request.ok()) return 0;
  fuzz::CheckReadsBack(
      "iopddl", solver::IopddlJson(*request),
      [](const std::string& text) { return solver::ParseIopddlJson(text, "printed"); },
      [](const solver::Request& read) { return solver::IopddlJson(read); });
  return 0;
}
