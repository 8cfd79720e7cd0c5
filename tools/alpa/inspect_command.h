// `alpa inspect MODEL [--json] [--print] [--memory] [--export FILE] [--cluster SPEC] [zoo
// overrides]`: what is in an HLO module, or in the train step of a zoo model, and what one
// execution costs; with a cluster, how long it would take on one of its devices (roofline,
// cost/compute_cost.h) and whether its naive peak memory fits that device. With --memory, what
// that peak is made of instead (memory_report.h).
#ifndef ALPA_TOOLS_ALPA_INSPECT_COMMAND_H_
#define ALPA_TOOLS_ALPA_INSPECT_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>

#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct InspectOptions {
  std::string model_path;  // an HLO file or a zoo name
  bool json = false;
  bool print = false;
  bool memory = false;      // --memory: the memory breakdown instead of the summary
  std::string export_path;  // empty: no export
  std::string cluster;      // --cluster SPEC: also estimate one execution on one of its devices
  ZooFlags zoo;
};

// Registers the sub-command on `app`; the options are filled in when it is parsed.
CLI::App* AddInspectCommand(CLI::App& app, InspectOptions& options);

// Runs it; returns the process exit code (command_util.h).
int RunInspect(const InspectOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_INSPECT_COMMAND_H_
