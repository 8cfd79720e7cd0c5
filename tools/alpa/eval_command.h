// `alpa eval MODEL [--seed N] [--inputs FILE] [--json] [zoo overrides]`: runs a module (or a zoo
// model's train step) in the reference interpreter and prints a fingerprint of every output, to
// smoke-test an import.
#ifndef ALPA_TOOLS_ALPA_EVAL_COMMAND_H_
#define ALPA_TOOLS_ALPA_EVAL_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct EvalOptions {
  std::string model_path;
  uint64_t seed = 0;
  std::string inputs_path;  // empty: random inputs from `seed`
  bool json = false;
  ZooFlags zoo;
};

CLI::App* AddEvalCommand(CLI::App& app, EvalOptions& options);

// Returns the process exit code (command_util.h).
int RunEval(const EvalOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_EVAL_COMMAND_H_
