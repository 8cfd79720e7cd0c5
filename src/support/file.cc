#include "support/file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return InvalidArgument("{}: read error", path);
  return contents.str();
}

Status WriteStringToFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (out) out.close();
  if (!out) return InvalidArgument("{}: cannot write the file: {}", path, std::strerror(errno));
  return Status::Ok();
}

}  // namespace alpa
