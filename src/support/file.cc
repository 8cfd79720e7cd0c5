#include "support/file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace alpa {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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
  int error = 0;
  const char* message = gzerror(file, &error);
  std::string error_text = (n < 0 && error != Z_OK) ? message : "";
  gzclose(file);
  if (n < 0) {
    return InvalidArgument("{}: not a valid gzip file ({}); pass the uncompressed file instead", path,
                           error_text);
  }
  return out;
}

}  // namespace

Result<std::string> ReadFileToString(const std::string& path) {
  if (EndsWith(path, ".gz")) return ReadGzip(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return InvalidArgument("{}: read error", path);
  return contents.str();
}

}  // namespace alpa
