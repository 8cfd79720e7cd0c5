// Files written so that a crash leaves them whole or absent to whoever renames them into place:
// every byte written, then flushed to disk (fsync), and directories flushed after the entries in
// them change. The checkpoint's tile files and manifest are written this way.
#ifndef ALPA_CHECKPOINT_DURABLE_FILE_H_
#define ALPA_CHECKPOINT_DURABLE_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace alpa::checkpoint {

// "PATH: cannot WHAT (the system's reason)", from errno.
Status SystemError(const std::string& what, const std::string& path);

// Creates or replaces `path` with `pieces` in order (short writes retried), flushed to disk.
Status WriteFileDurably(const std::string& path, const std::vector<std::string_view>& pieces);

// Flushes a directory: the entries created, renamed or removed in it become durable.
Status SyncDirectory(const std::string& dir);

}  // namespace alpa::checkpoint

#endif  // ALPA_CHECKPOINT_DURABLE_FILE_H_
