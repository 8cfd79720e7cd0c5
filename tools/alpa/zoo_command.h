// `alpa zoo [--json]`: the models of the zoo (models/zoo.h), the names every MODEL argument
// accepts.
#ifndef ALPA_TOOLS_ALPA_ZOO_COMMAND_H_
#define ALPA_TOOLS_ALPA_ZOO_COMMAND_H_

#include <CLI/CLI.hpp>

namespace alpa::tools {

struct ZooListOptions {
  bool json = false;
};

CLI::App* AddZooCommand(CLI::App& app, ZooListOptions& options);

// Returns the process exit code (command_util.h).
int RunZoo(const ZooListOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_ZOO_COMMAND_H_
