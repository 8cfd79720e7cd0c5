// What the fuzz targets assert beyond "no crash": a text a reader accepts must print to text that
// reads back and prints the same (print∘read idempotent), else the target aborts with both.
#ifndef ALPA_FUZZ_FUZZ_CHECK_H_
#define ALPA_FUZZ_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace alpa::fuzz {

// `data` as the text a reader takes.
inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Reads `printed` (what a reader's accepted value printed as) back with `read` (text ->
// Result<T>) and prints that with `print` (T -> text): aborts unless it reads and prints the same.
// `what` names the format in the report.
template <typename Read, typename Print>
void CheckReadsBack(const char* what, const std::string& printed, Read read, Print print) {
  auto reread = read(printed);
  if (!reread.ok()) {
    std::fprintf(stderr, "%s: the printed text does not read back: %s\n%s\n", what,
                 reread.status().message().c_str(), printed.c_str());
    std::abort();
  }
  const std::string reprinted = print(*reread);
  if (reprinted == printed) return;
  std::fprintf(stderr, "%s: print is not idempotent:\n%s\n---\n%s\n", what, printed.c_str(),
               reprinted.c_str());
  std::abort();
}

}  // namespace alpa::fuzz

#endif  // ALPA_FUZZ_FUZZ_CHECK_H_
