#include "support/system_memory.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>

#include "support/file.h"

namespace alpa {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

// The non-negative decimal integer at the start of `text` (after blanks); nullopt for anything
// else, "max" included.
std::optional<int64_t> LeadingInteger(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data() + first, text.data() + text.size(), value);
  if (error != std::errc() || value < 0) return std::nullopt;
  return value;
}

// "MemAvailable:   123456 kB" in /proc/meminfo.
std::optional<int64_t> KernelAvailableBytes() {
  const std::optional<std::string> meminfo = ReadSmallFile("/proc/meminfo");
  if (!meminfo.has_value()) return std::nullopt;
  constexpr std::string_view kKey = "MemAvailable:";
  const size_t at = meminfo->find(kKey);
  if (at == std::string::npos) return std::nullopt;
  const std::optional<int64_t> kib =
      LeadingInteger(std::string_view(*meminfo).substr(at + kKey.size()));
  if (!kib.has_value()) return std::nullopt;
  return *kib * 1024;
}

// The process's cgroup path, e.g. "/user.slice", from its line in /proc/self/cgroup that holds
// `prefix` ("0::" for cgroup v2, ":memory:" for v1's memory hierarchy); nullopt if none does.
std::optional<std::string> CgroupPath(const std::string& membership, std::string_view prefix) {
  size_t at = 0;
  while (at < membership.size()) {
    const size_t end = std::min(membership.find('\n', at), membership.size());
    const std::string_view line = std::string_view(membership).substr(at, end - at);
    if (const size_t found = line.find(prefix); found != std::string_view::npos) {
      return std::string(line.substr(found + prefix.size()));
    }
    at = end + 1;
  }
  return std::nullopt;
}

// The limit less the use of the process's memory cgroup, v2 (memory.max less memory.current) or
// v1 (memory.limit_in_bytes alone: v1's usage counts the page cache, which the kernel gives back),
// in the cgroup's own directory or, inside a container that sees its cgroup as the root, at the
// top; nullopt without a limit ("max").
std::optional<int64_t> CgroupAvailableBytes() {
  const std::optional<std::string> membership = ReadSmallFile("/proc/self/cgroup");
  if (!membership.has_value()) return std::nullopt;
  struct Hierarchy {
    std::string_view prefix, root, limit, usage;
  };
  constexpr Hierarchy kHierarchies[] = {
      {"0::", "/sys/fs/cgroup", "memory.max", "memory.current"},
      {":memory:", "/sys/fs/cgroup/memory", "memory.limit_in_bytes", ""},
  };
  for (const Hierarchy& hierarchy : kHierarchies) {
    const std::optional<std::string> path = CgroupPath(*membership, hierarchy.prefix);
    if (!path.has_value()) continue;
    for (const std::string& directory :
         {std::string(hierarchy.root) + (*path == "/" ? "" : *path), std::string(hierarchy.root)}) {
      const std::optional<std::string> limit_text =
          ReadSmallFile(directory + "/" + std::string(hierarchy.limit));
      if (!limit_text.has_value()) continue;
      const std::optional<int64_t> limit = LeadingInteger(*limit_text);
      if (!limit.has_value()) return std::nullopt;  // "max": no limit
      if (hierarchy.usage.empty()) return *limit;
      const std::optional<std::string> usage_text =
          ReadSmallFile(directory + "/" + std::string(hierarchy.usage));
      const std::optional<int64_t> usage =
          usage_text.has_value() ? LeadingInteger(*usage_text) : std::nullopt;
      if (!usage.has_value()) return std::nullopt;
      return std::max<int64_t>(0, *limit - *usage);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> AvailableMemoryBytes() {
  const std::optional<int64_t> kernel = KernelAvailableBytes();
  const std::optional<int64_t> cgroup = CgroupAvailableBytes();
  if (kernel.has_value() && cgroup.has_value()) return std::min(*kernel, *cgroup);
  return kernel.has_value() ? kernel : cgroup;
}

}  // namespace alpa
