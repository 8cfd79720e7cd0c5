#include "tools/alpa/zoo_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/zoo.h"
#include "support/table.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {

CLI::App* AddZooCommand(CLI::App& app, ZooListOptions& options) {
  CLI::App* command = app.add_subcommand(
      "zoo", "List the models of the zoo: the names inspect, eval, run and grad accept as MODEL");
  command->add_flag("--json", options.json,
                    "Print a JSON list of {\"name\", \"family\", \"description\"}");
  command->footer(
      "Every model accepts overrides of its config (--layers, --hidden, --heads, --seq, --vocab, "
      "--experts, --batch, --dtype) and of its training (--micro-batches, --remat, --optimizer, "
      "--lr); see `alpa inspect --help`.");
  return command;
}

int RunZoo(const ZooListOptions& options) {
  const std::vector<models::ZooEntry>& entries = models::ZooEntries();
  if (options.json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const models::ZooEntry& entry : entries) {
      json.push_back(
          {{"name", entry.name}, {"family", entry.family}, {"description", entry.description}});
    }
    fmt::print("{}\n", DumpJson(json));
    return kExitOk;
  }
  Table table({"name", "family", "description"},
              {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft});
  for (const models::ZooEntry& entry : entries) {
    table.AddRow({entry.name, entry.family, entry.description});
  }
  fmt::print("{}", table.Render());
  return kExitOk;
}

}  // namespace alpa::tools
