// Reading input files, plain or gzip-compressed, and writing output files.
#ifndef ALPA_SUPPORT_FILE_H_
#define ALPA_SUPPORT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "support/status.h"

namespace alpa {

// Reads the whole file; a name ending in ".gz" is decompressed. Errors name the path.
Result<std::string> ReadFileToString(const std::string& path);

// A file's bytes, read-only: a plain file mapped into memory (nothing copied; the kernel reads
// pages in as they are touched and may drop them again under pressure, so a file of gigabytes
// costs no memory of the process's own), a ".gz" one inflated into memory. Errors name the path.
// A mapped file must not shrink while it is read (the reader would fault past its new end).
class FileBytes {
 public:
  static Result<FileBytes> Open(const std::string& path);
  FileBytes(FileBytes&& other) noexcept;
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();

  std::string_view view() const {
    return mapped_ != nullptr ? std::string_view(mapped_, size_) : inflated_;
  }

 private:
  FileBytes() = default;

  const char* mapped_ = nullptr;  // munmap'd on destruction
  size_t size_ = 0;
  std::string inflated_;
};

// Creates or replaces the file with `contents`. Errors name the path and the system's reason.
Status WriteStringToFile(const std::string& path, std::string_view contents);

}  // namespace alpa

#endif  // ALPA_SUPPORT_FILE_H_
