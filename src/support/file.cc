#include "support/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace alpa {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::string> ReadGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return NotFound("{}: cannot open: {}", path, std::strerror(errno));
  }
  std::string out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  // A truncated stream ends with n == 0 and Z_BUF_ERROR ("unexpected end of file"), so the error
  // state, not just n, decides.
  int error = Z_OK;
  const std::string error_text = gzerror(file, &error);
  gzclose(file);
  if (n < 0 || error != Z_OK) {
    return InvalidArgument("{}: not a valid gzip file ({}); pass the uncompressed file instead",
                           path, error_text);
  }
  return out;
}

}  // namespace

Result<std::string> ReadFileToString(const std::string& path) {
  // A directory opens as an empty stream on Linux, which would read as an empty file.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    return InvalidArgument("{}: is a directory; pass a file", path);
  }
  if (EndsWith(path, ".gz")) return ReadGzip(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("{}: cannot open: {}", path, std::strerror(errno));
  // Sized once from the file and read in one call: a stream buffer grown by doubling and then
  // copied out held up to three times a large file (problem files run to gigabytes).
  std::string contents;
  const std::streamoff size = in.seekg(0, std::ios::end).tellg();
  if (size > 0) {
    contents.resize(static_cast<size_t>(size));
    in.seekg(0).read(contents.data(), size);
    if (in.gcount() != size) return InvalidArgument("{}: read error", path);
  } else {
    // A size the stream cannot tell (a pipe, /proc): read to the end.
    in.clear();
    in.seekg(0);
    std::ostringstream stream;
    stream << in.rdbuf();
    contents = std::move(stream).str();
  }
  if (in.bad()) return InvalidArgument("{}: read error", path);
  return contents;
}

Result<FileBytes> FileBytes::Open(const std::string& path) {
  FileBytes bytes;
  std::error_code ignored;
  if (EndsWith(path, ".gz") || std::filesystem::is_directory(path, ignored)) {
    ALPA_ASSIGN_OR_RETURN(bytes.inflated_, ReadFileToString(path));
    return bytes;
  }
  const int descriptor = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return NotFound("{}: cannot open: {}", path, std::strerror(errno));
  struct stat status {};
  if (fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode) || status.st_size == 0) {
    // Not a regular file (a pipe, a device) or empty: nothing to map, read it.
    close(descriptor);
    ALPA_ASSIGN_OR_RETURN(bytes.inflated_, ReadFileToString(path));
    return bytes;
  }
  void* mapped =
      mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ, MAP_PRIVATE, descriptor, 0);
  const int map_error = errno;
  close(descriptor);  // the mapping keeps the file
  if (mapped == MAP_FAILED) {
    return InvalidArgument("{}: cannot map the file: {}", path, std::strerror(map_error));
  }
  // Parsers read it front to back.
  madvise(mapped, static_cast<size_t>(status.st_size), MADV_SEQUENTIAL);
  bytes.mapped_ = static_cast<const char*>(mapped);
  bytes.size_ = static_cast<size_t>(status.st_size);
  return bytes;
}

FileBytes::FileBytes(FileBytes&& other) noexcept
    : mapped_(std::exchange(other.mapped_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      inflated_(std::move(other.inflated_)) {}

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    if (mapped_ != nullptr) munmap(const_cast<char*>(mapped_), size_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    size_ = std::exchange(other.size_, 0);
    inflated_ = std::move(other.inflated_);
  }
  return *this;
}

FileBytes::~FileBytes() {
  if (mapped_ != nullptr) munmap(const_cast<char*>(mapped_), size_);
}

Status WriteStringToFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (out) out.close();
  if (!out) return InvalidArgument("{}: cannot write the file: {}", path, std::strerror(errno));
  return Status::Ok();
}

}  // namespace alpa
