// How much memory this process can still take, for refusing work that cannot fit before it is
// killed half way (the kernel's out-of-memory killer gives no message).
#ifndef ALPA_SUPPORT_SYSTEM_MEMORY_H_
#define ALPA_SUPPORT_SYSTEM_MEMORY_H_

#include <cstdint>
#include <optional>

namespace alpa {

// The least of the kernel's estimate of memory available without swapping (MemAvailable in
// /proc/meminfo) and, when the process's cgroup (v2) has a memory limit, the limit less the
// cgroup's current use. nullopt where neither can be read (not Linux).
std::optional<int64_t> AvailableMemoryBytes();

}  // namespace alpa

#endif  // ALPA_SUPPORT_SYSTEM_MEMORY_H_
