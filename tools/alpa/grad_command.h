// `alpa grad MODEL [--wrt 0,2] [-o OUT] [model overrides]`: the gradient of a loss as an HLO
// module (autodiff::Grad), for a loss in an HLO file or a zoo model's loss.
#ifndef ALPA_TOOLS_ALPA_GRAD_COMMAND_H_
#define ALPA_TOOLS_ALPA_GRAD_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct GradCommandOptions {
  std::string model;         // an HLO file or a zoo name
  std::vector<int64_t> wrt;  // parameter numbers; empty: a zoo model's weights
  std::string output_path;   // empty: stdout
  ZooFlags zoo;
};

CLI::App* AddGradCommand(CLI::App& app, GradCommandOptions& options);

// Returns the process exit code (command_util.h).
int RunGrad(const GradCommandOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_GRAD_COMMAND_H_
