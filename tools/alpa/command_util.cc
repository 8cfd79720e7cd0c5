#include "tools/alpa/command_util.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "api/hlo_import.h"
#include "hlo/printer.h"
#include "support/file.h"
#include "support/fingerprint.h"

namespace alpa::tools {

int ReportError(const Status& status) {
  fmt::print(stderr, "alpa: error: {}\n", status.message());
  return ExitCodeOf(status);
}

int ExitCodeOf(const Status& status) {
  return status.code() == StatusCode::kInternal ? kExitInternalError : kExitBadInput;
}

Result<std::unique_ptr<ir::Module>> LoadModel(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(api::ImportedHlo imported, api::ImportHloText(text, path));
  for (const std::string& note : imported.notes) fmt::print(stderr, "alpa: note: {}\n", note);
  return std::move(imported.module);
}

// The interpreter allocates each instruction's value afresh and frees it after its last use.
// glibc serves blocks above 32 MiB with mmap and unmaps them on free, and gives the top of the heap
// back above 128 KiB free, so each large intermediate page-faulted again: evaluating the BERT-large
// step spent most of its time in the kernel. Kept in the heap, freed buffers are reused.
void KeepFreedMemoryForReuse() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

CLI::Validator SeedValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        uint64_t seed = 0;
        auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seed);
        if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
          return "expected an integer from 0 to 2^64-1, found '" + value + "'";
        }
        return "";
      },
      "");
}

Status WriteTextFile(const std::string& path, const std::string& text, const std::string& flag) {
  // "--svg out/x.svg: cannot write the file: ...", the flag before the path it names.
  const Status written = WriteStringToFile(path, text);
  if (written.ok()) return written;
  return InvalidArgument("{} {}", flag, written.message());
}

std::string DumpJson(const nlohmann::ordered_json& json) {
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int EmitDocument(const nlohmann::ordered_json& document, const std::string& text,
                 const std::string& output_path, bool json) {
  if (!output_path.empty()) {
    const Status written = WriteTextFile(output_path, DumpJson(document) + "\n", "-o");
    if (!written.ok()) return ReportError(written);
  }
  fmt::print("{}", json ? DumpJson(document) + "\n" : text);
  return kExitOk;
}

std::string ModuleFingerprint(const ir::Module& module) {
  return FingerprintHex(hlo::PrintModule(module));
}

// "2x4" -> {2, 4}; every factor a positive integer.
Result<std::vector<int64_t>> ParseMeshShape(const std::string& text) {
  std::vector<int64_t> shape;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find_first_of("x,", begin), text.size());
    const std::string part = text.substr(begin, end - begin);
    char* rest = nullptr;
    const long long value = std::strtoll(part.c_str(), &rest, 10);
    if (part.empty() || *rest != '\0' || value < 1) {
      return InvalidArgument("--mesh {}: '{}' is not a positive integer; write the shape as 2x4",
                             text, part);
    }
    shape.push_back(value);
    begin = end + 1;
  }
  return shape;
}

}  // namespace alpa::tools
