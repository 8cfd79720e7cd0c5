#include "tools/alpa/command_util.h"

#include <fmt/format.h>

#include <cstdio>

#include "hlo/parser.h"
#include "ir/verifier.h"
#include "support/file.h"

namespace alpa::tools {

int ReportError(const Status& status) {
  fmt::print(stderr, "alpa: error: {}\n", status.message());
  return status.code() == StatusCode::kInternal ? kExitInternalError : kExitBadInput;
}

Result<std::unique_ptr<ir::Module>> LoadModel(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, hlo::ParseHloModule(text, path));
  // The verifier's message starts with FILE:LINE:COLUMN of the offending instruction.
  ALPA_RETURN_IF_ERROR(ir::VerifyModule(*module));
  return module;
}

}  // namespace alpa::tools
