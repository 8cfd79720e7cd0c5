// Reading an HLO module to plan or run it, as every command and the Python package read one:
// parsed (hlo/parser.h), verified (ir/verifier.h), and its entry flattened
// (ir/control_flow_flattening.h: calls inlined, counted loops such as a scanned layer stack
// unrolled, their indices folded), then verified again.
//
//   api::ImportedHlo imported = api::ImportHloText(text, "step.hlo").value();
//   for (const std::string& note : imported.notes) ...   // loops that stay loops, and why
#ifndef ALPA_API_HLO_IMPORT_H_
#define ALPA_API_HLO_IMPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/control_flow_flattening.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::api {

struct ImportedHlo {
  std::unique_ptr<ir::Module> module;
  ir::ControlFlowFlattening flattening;
  // One line per loop left a loop: "PATH: %NAME stays a loop and runs replicated on every
  // device: WHY", for the caller to show.
  std::vector<std::string> notes;
};

// Errors: the parser's and the verifier's, each with PATH:LINE:COLUMN.
Result<ImportedHlo> ImportHloText(const std::string& text, const std::string& path);

}  // namespace alpa::api

#endif  // ALPA_API_HLO_IMPORT_H_
