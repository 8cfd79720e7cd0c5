#include "tools/alpa/inspect_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cost/flop_count.h"
#include "cost/memory_usage.h"
#include "hlo/printer.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

// The human report lists this many entry parameters; --json lists all of them.
constexpr size_t kMaxParametersShown = 24;

// Elements of all array leaves of `shape` (tokens and other non-array leaves count 0).
int64_t ArrayElementCount(const ir::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const ir::Shape& element : shape.tuple_shapes()) total += ArrayElementCount(element);
    return total;
  }
  return shape.IsArray() ? shape.ElementCount() : 0;
}

struct ModuleSummary {
  std::string name;
  int64_t computations = 0;
  int64_t instructions = 0;
  std::map<ir::Opcode, int64_t> opcodes;  // count over all computations
  std::vector<const ir::Instruction*> parameters;
  int64_t parameter_elements = 0;
  int64_t parameter_bytes = 0;
  cost::FlopCount flops;
  cost::MemoryUsage memory;
  const ir::Instruction* root = nullptr;
};

Result<ModuleSummary> Summarize(const ir::Module& module) {
  ModuleSummary summary;
  summary.name = module.name();
  summary.computations = static_cast<int64_t>(module.computations().size());
  summary.instructions = module.instruction_count();
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      ++summary.opcodes[instruction->opcode()];
    }
  }
  const ir::Computation& entry = *module.entry();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  summary.parameters.assign(parameters.begin(), parameters.end());
  for (const ir::Instruction* parameter : summary.parameters) {
    summary.parameter_elements += ArrayElementCount(parameter->shape());
    summary.parameter_bytes += parameter->shape().ByteSize();
  }
  ALPA_ASSIGN_OR_RETURN(summary.flops, cost::CountFlops(entry));
  summary.memory = cost::NaivePeakMemory(entry);
  summary.root = entry.root();
  return summary;
}

// Opcodes by count, most frequent first, ties by name.
std::vector<std::pair<ir::Opcode, int64_t>> OpcodesByCount(const ModuleSummary& summary) {
  std::vector<std::pair<ir::Opcode, int64_t>> sorted(summary.opcodes.begin(),
                                                     summary.opcodes.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return ir::OpcodeName(a.first) < ir::OpcodeName(b.first);
  });
  return sorted;
}

nlohmann::ordered_json ToJson(const ModuleSummary& summary, const std::string& path) {
  nlohmann::ordered_json json;
  json["source"] = path;
  json["module"] = summary.name;
  json["computations"] = summary.computations;
  json["instructions"] = summary.instructions;
  json["opcodes"] = nlohmann::ordered_json::object();
  for (const auto& [opcode, count] : OpcodesByCount(summary)) {
    json["opcodes"][std::string(ir::OpcodeName(opcode))] = count;
  }
  json["parameters"] = summary.parameter_elements;
  json["parameter_bytes"] = summary.parameter_bytes;
  json["flops"] = summary.flops.flops;
  json["flops_by_opcode"] = nlohmann::ordered_json::object();
  for (const auto& [opcode, flops] : summary.flops.by_opcode) {
    json["flops_by_opcode"][std::string(ir::OpcodeName(opcode))] = flops;
  }
  json["unknown_trip_count_loops"] = summary.flops.unknown_trip_count_loops;
  json["peak_memory_bytes"] = summary.memory.peak_bytes;
  json["peak_memory_instruction"] =
      summary.memory.peak_instruction ? summary.memory.peak_instruction->name() : "";
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const ir::Instruction* parameter : summary.parameters) {
    parameters.push_back({{"name", parameter->name()},
                          {"shape", parameter->shape().ToString(/*print_layout=*/false)},
                          {"elements", ArrayElementCount(parameter->shape())},
                          {"bytes", parameter->shape().ByteSize()}});
  }
  json["entry"] = {{"name", summary.root->parent()->name()},
                   {"parameters", std::move(parameters)},
                   {"result", summary.root->shape().ToString(/*print_layout=*/false)}};
  return json;
}

std::string ToText(const ModuleSummary& summary, const std::string& path) {
  std::string out;
  const ir::Instruction* peak = summary.memory.peak_instruction;
  out += fmt::format("module        {}  ({})\n", summary.name, path);
  out += fmt::format("computations  {} (entry %{})\n", summary.computations,
                     summary.root->parent()->name());
  out += fmt::format("instructions  {}\n", summary.instructions);
  out += fmt::format("parameters    {} ({} elements, {})\n", summary.parameters.size(),
                     summary.parameter_elements, FormatBytes(summary.parameter_bytes));
  out += fmt::format("result        {}\n", summary.root->shape().ToString(false));
  out +=
      fmt::format("flops         {} per execution\n", FormatDecimal(summary.flops.flops, "FLOP"));
  if (!summary.flops.unknown_trip_count_loops.empty()) {
    out += fmt::format("              ({} while loop(s) without a known trip count counted once)\n",
                       summary.flops.unknown_trip_count_loops.size());
  }
  out += fmt::format("peak memory   {} (naive schedule, reached at %{})\n",
                     FormatBytes(summary.memory.peak_bytes), peak ? peak->name() : "-");

  Table parameters(
      {"#", "parameter", "shape", "bytes"},
      {Table::Align::kRight, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight});
  for (size_t i = 0; i < summary.parameters.size() && i < kMaxParametersShown; ++i) {
    const ir::Instruction& parameter = *summary.parameters[i];
    parameters.AddRow({std::to_string(i), "%" + parameter.name(), parameter.shape().ToString(false),
                       FormatBytes(parameter.shape().ByteSize())});
  }
  out += "\nentry parameters\n" + parameters.Render(2);
  if (summary.parameters.size() > kMaxParametersShown) {
    out += fmt::format("  ... and {} more (--json lists all)\n",
                       summary.parameters.size() - kMaxParametersShown);
  }

  Table opcodes({"opcode", "count", "flops"},
                {Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight});
  for (const auto& [opcode, count] : OpcodesByCount(summary)) {
    auto flops = summary.flops.by_opcode.find(opcode);
    opcodes.AddRow(
        {std::string(ir::OpcodeName(opcode)), std::to_string(count),
         flops == summary.flops.by_opcode.end() ? "" : FormatDecimal(flops->second, "FLOP")});
  }
  out += "\ninstructions by opcode (all computations)\n" + opcodes.Render(2);
  return out;
}

}  // namespace

CLI::App* AddInspectCommand(CLI::App& app, InspectOptions& options) {
  CLI::App* command = app.add_subcommand(
      "inspect", "Summarize an HLO module: instructions, parameters, FLOPs, naive peak memory");
  command->add_option("MODEL", options.model_path, "HLO text file (plain or .gz)")->required();
  command->add_flag("--json", options.json, "Print the summary as one JSON object");
  command->add_flag("--print", options.print, "Print the parsed module back as HLO text instead");
  command->footer(
      "Exit codes: 0 success, 1 internal error, 2 bad input (unreadable file, HLO syntax or "
      "verifier error, bad flag).");
  return command;
}

int RunInspect(const InspectOptions& options) {
  Result<std::unique_ptr<ir::Module>> module = LoadModel(options.model_path);
  if (!module.ok()) return ReportError(module.status());
  if (options.print) {
    fmt::print("{}", hlo::PrintModule(**module));
    return kExitOk;
  }
  Result<ModuleSummary> summary = Summarize(**module);
  if (!summary.ok()) return ReportError(summary.status());
  if (options.json) {
    // A path (or a name taken from the file) need not be UTF-8; the default strict dump would throw
    // on it, so invalid bytes become U+FFFD instead.
    fmt::print("{}\n", ToJson(*summary, options.model_path)
                           .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  } else {
    fmt::print("{}", ToText(*summary, options.model_path));
  }
  return kExitOk;
}

}  // namespace alpa::tools
