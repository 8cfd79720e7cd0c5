#include "checkpoint/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace alpa::checkpoint {

Status SystemError(const std::string& what, const std::string& path) {
  return InvalidArgument("{}: cannot {} ({})", path, what, std::strerror(errno));
}

Status WriteFileDurably(const std::string& path, const std::vector<std::string_view>& pieces) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return SystemError("create", path);
  Status status = Status::Ok();
  for (std::string_view bytes : pieces) {
    while (!bytes.empty() && status.ok()) {
      const ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) status = SystemError("write", path);
      if (n > 0) bytes.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (status.ok() && ::fsync(fd) != 0) status = SystemError("flush to disk", path);
  if (::close(fd) != 0 && status.ok()) status = SystemError("close", path);
  return status;
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SystemError("open the directory", dir);
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced ? Status::Ok() : SystemError("flush the directory to disk", dir);
}

}  // namespace alpa::checkpoint
