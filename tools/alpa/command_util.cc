#include "tools/alpa/command_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <regex>
#include <string_view>

#include "hlo/parser.h"
#include "ir/verifier.h"
#include "support/file.h"

namespace alpa::tools {
namespace {

// The HLO parser writes compiler-style "FILE:L:C: error: what". Under our own "alpa: error: "
// prefix the second "error: " is noise, so it is dropped after every line:col of the first line
// (the lines after it echo the source, which is left as it is).
std::string WithoutRepeatedSeverity(const std::string& message) {
  static const std::regex kLocatedError(R"((:[0-9]+:[0-9]+): error: )");
  const size_t end = message.find('\n');
  std::string first = message.substr(0, end);
  first = std::regex_replace(first, kLocatedError, "$1: ");
  return end == std::string::npos ? first : first + message.substr(end);
}

// `line` with leading blanks, an optional `prefix` word and an optional '%' removed; true when it
// then starts with `name` followed by one of `terminators`.
bool StartsWithName(std::string_view line, std::string_view prefix, std::string_view name,
                    std::string_view terminators) {
  auto skip_blanks = [&line] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  };
  skip_blanks();
  if (line.substr(0, prefix.size()) == prefix) {
    line.remove_prefix(prefix.size());
    skip_blanks();
  }
  if (!line.empty() && line.front() == '%') line.remove_prefix(1);
  if (line.substr(0, name.size()) != name || line.size() == name.size()) return false;
  return terminators.find(line[name.size()]) != std::string_view::npos;
}

// Offset of the first line at or after `from` for which `matches(line)` holds.
template <typename Predicate>
std::optional<size_t> FindLine(std::string_view text, size_t from, Predicate matches) {
  for (size_t start = from; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (matches(text.substr(start, end - start))) return start;
    start = end + 1;
  }
  return std::nullopt;
}

// The verifier works on the IR, which keeps no source positions, and names what it rejects as
// "%name" (after "computation %c: " context). This finds where the first such instruction is
// defined in `text` ("FILE:L:C", C at the instruction's name), searching inside the named
// computation when there is one; or just "FILE" when no name is found.
std::string LocateVerifierError(std::string_view text, const std::string& path,
                                const std::string& message) {
  static const std::regex kName(R"(%([A-Za-z0-9_.\-]+))");
  size_t from = 0;
  for (auto it = std::sregex_iterator(message.begin(), message.end(), kName);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1].str();
    std::optional<size_t> line = FindLine(
        text, from, [&name](std::string_view l) { return StartsWithName(l, "ROOT ", name, " ="); });
    if (line.has_value()) {
      size_t name_start = text.find_first_not_of(" \t", *line);
      if (text.compare(name_start, 5, "ROOT ") == 0) {
        name_start = text.find_first_not_of(" \t", name_start + 5);
      }
      const auto line_number = 1 + std::count(text.begin(), text.begin() + *line, '\n');
      return fmt::format("{}:{}:{}", path, line_number, name_start - *line + 1);
    }
    std::optional<size_t> computation = FindLine(text, from, [&name](std::string_view l) {
      return StartsWithName(l, "ENTRY ", name, " ({");
    });
    if (computation.has_value()) from = *computation;
  }
  return path;
}

}  // namespace

int ReportError(const Status& status) {
  fmt::print(stderr, "alpa: error: {}\n", WithoutRepeatedSeverity(status.message()));
  return status.code() == StatusCode::kInternal ? kExitInternalError : kExitBadInput;
}

Result<std::unique_ptr<ir::Module>> LoadModel(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, hlo::ParseHloModule(text, path));
  if (Status verified = ir::VerifyModule(*module); !verified.ok()) {
    return InvalidArgument("{}: the module does not verify: {}",
                           LocateVerifierError(text, path, verified.message()), verified.message());
  }
  return module;
}

}  // namespace alpa::tools
