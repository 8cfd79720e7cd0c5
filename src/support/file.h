// Reading input files, plain or gzip-compressed.
#ifndef ALPA_SUPPORT_FILE_H_
#define ALPA_SUPPORT_FILE_H_

#include <string>

#include "support/status.h"

namespace alpa {

// Reads the whole file; a name ending in ".gz" is decompressed. Errors name the path.
Result<std::string> ReadFileToString(const std::string& path);

}  // namespace alpa

#endif  // ALPA_SUPPORT_FILE_H_
