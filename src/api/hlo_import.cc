#include "api/hlo_import.h"

#include <fmt/format.h>

#include "hlo/parser.h"
#include "ir/verifier.h"

namespace alpa::api {

Result<ImportedHlo> ImportHloText(const std::string& text, const std::string& path) {
  ImportedHlo imported;
  ALPA_ASSIGN_OR_RETURN(imported.module, hlo::ParseHloModule(text, path));
  // The verifier's message starts with FILE:LINE:COLUMN of the offending instruction.
  ALPA_RETURN_IF_ERROR(ir::VerifyModule(*imported.module));
  imported.flattening = ir::FlattenControlFlow(*imported.module->entry());
  for (const ir::KeptLoop& loop : imported.flattening.loops_kept) {
    imported.notes.push_back(
        fmt::format("{}: %{} stays a loop and runs replicated on every device: {}", path, loop.name,
                    loop.reason));
  }
  if (imported.flattening.calls_inlined > 0 || imported.flattening.loops_unrolled > 0) {
    const Status verified = ir::VerifyModule(*imported.module);
    if (!verified.ok()) {
      return Internal("{}: the module no longer verifies after its control flow was flattened: {}",
                      path, verified.message());
    }
  }
  return imported;
}

}  // namespace alpa::api
