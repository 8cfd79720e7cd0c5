// Reading input files, plain or gzip-compressed, and writing output files.
#ifndef ALPA_SUPPORT_FILE_H_
#define ALPA_SUPPORT_FILE_H_

#include <string>
#include <string_view>

#include "support/status.h"

namespace alpa {

// Reads the whole file; a name ending in ".gz" is decompressed. Errors name the path.
Result<std::string> ReadFileToString(const std::string& path);

// Creates or replaces the file with `contents`. Errors name the path and the system's reason.
Status WriteStringToFile(const std::string& path, std::string_view contents);

}  // namespace alpa

#endif  // ALPA_SUPPORT_FILE_H_
