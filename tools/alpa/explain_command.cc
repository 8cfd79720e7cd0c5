#include "tools/alpa/explain_command.h"

#include <fmt/format.h>

#include "plan/plan_document.h"
#include "plan/plan_explanation.h"
#include "support/file.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {

CLI::App* AddExplainCommand(CLI::App& app, ExplainOptions& options) {
  CLI::App* command =
      app.add_subcommand("explain",
                         "Explain a saved plan: per stage time and memory, the bottleneck, and the "
                         "alternatives it beat");
  command->add_option("PLAN", options.plan_path, "A plan document (alpa plan -o plan.json)")
      ->required();
  command->add_flag("--json", options.json, "Print the explanation as JSON");
  command->footer("Exit codes: 0 success, 1 internal error, 2 bad input (not a plan document).");
  return command;
}

int RunExplain(const ExplainOptions& options) {
  Result<std::string> text = ReadFileToString(options.plan_path);
  if (!text.ok()) return ReportError(text.status());
  const plan::document::Json plan =
      plan::document::Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  Result<plan::Explanation> explanation = plan::ExplainPlan(plan, options.plan_path);
  if (!explanation.ok()) return ReportError(explanation.status());
  fmt::print("{}", options.json ? DumpJson(explanation->json) + "\n" : explanation->text);
  return kExitOk;
}

}  // namespace alpa::tools
