// `alpa run MODEL [--steps N] [--seed S] [--json] [zoo overrides]`: trains a zoo model for N steps
// on one device (the reference interpreter) on synthetic data with a learnable pattern, printing
// the loss of each step as it goes.
#ifndef ALPA_TOOLS_ALPA_RUN_COMMAND_H_
#define ALPA_TOOLS_ALPA_RUN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct RunOptions {
  std::string model;  // a zoo name
  int64_t steps = 10;
  uint64_t seed = 0;
  bool json = false;
  ZooFlags zoo;
};

CLI::App* AddRunCommand(CLI::App& app, RunOptions& options);

// Returns the process exit code (command_util.h).
int RunRun(const RunOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_RUN_COMMAND_H_
