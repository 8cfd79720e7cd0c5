// `alpa explain PLAN.json [--json]`: why a saved plan (`alpa plan -o`) is what it is, as
// plan/plan_explanation.h explains it; --json prints the explanation's JSON. A file that is not a
// plan document is bad input (exit 2) naming the file and the field.
#ifndef ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_
#define ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>

namespace alpa::tools {

struct ExplainOptions {
  std::string plan_path;
  bool json = false;
};

CLI::App* AddExplainCommand(CLI::App& app, ExplainOptions& options);

// Returns the process exit code (command_util.h).
int RunExplain(const ExplainOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_EXPLAIN_COMMAND_H_
