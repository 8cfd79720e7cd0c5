// What every `alpa` sub-command shares: exit codes, error reporting, loading a model.
#ifndef ALPA_TOOLS_ALPA_COMMAND_UTIL_H_
#define ALPA_TOOLS_ALPA_COMMAND_UTIL_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::tools {

// Exit codes of the `alpa` command, the contract scripts rely on.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternalError = 1;  // a bug in alpa: please report it
inline constexpr int kExitBadInput = 2;       // the input (file, flag, model) is at fault
inline constexpr int kExitCheckFailed = 3;  // `alpa run --check`: results differ from the reference

// Prints "alpa: error: <message>" on stderr and returns the exit code for the status: internal
// errors 1, everything else (the user's input) 2.
int ReportError(const Status& status);
// The exit code ReportError returns for `status`, without printing.
int ExitCodeOf(const Status& status);

// Reads MODEL (HLO text, plain or .gz), parses and verifies it and flattens its control flow
// (api/hlo_import.h), with a note on stderr for each loop left a loop. Every failure names the
// file and, for parse and verifier errors, the line:column (for the verifier, of the rejected
// instruction, from its parsed location) and the instruction.
Result<std::unique_ptr<ir::Module>> LoadModel(const std::string& path);

// Keeps memory the interpreter frees in the heap for reuse instead of returning it to the
// system; call before evaluating large modules (see the comment in command_util.cc).
void KeepFreedMemoryForReuse();

// Accepts an integer from 0 to 2^64-1 for a uint64_t seed: CLI11 alone would wrap "-1" to
// 2^64-1 and saturate a too-large number.
CLI::Validator SeedValidator();

// Writes `text` to `path` (replacing it). The error names `flag` (e.g. "--export") and the path.
Status WriteTextFile(const std::string& path, const std::string& text, const std::string& flag);

// A command's result: writes `document` to `output_path` when given (-o) and prints it (--json)
// or `text`. Returns the exit code.
int EmitDocument(const nlohmann::ordered_json& document, const std::string& text,
                 const std::string& output_path, bool json);

// FNV-1a over the module's HLO text, as 16 hex digits: the same model and config always give
// the same value (plans record it to detect a changed model).
std::string ModuleFingerprint(const ir::Module& module);

// Dumps JSON for printing; invalid UTF-8 (a path need not be UTF-8) becomes U+FFFD rather than
// an exception.
std::string DumpJson(const nlohmann::ordered_json& json);

// --mesh "2x4" -> {2, 4}; every factor a positive integer, else an error naming the flag.
Result<std::vector<int64_t>> ParseMeshShape(const std::string& text);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_COMMAND_UTIL_H_
