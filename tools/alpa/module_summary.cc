#include "tools/alpa/module_summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/table.h"
#include "support/units.h"

namespace alpa::tools {
namespace {

// The human report lists this many entry parameters; --json lists all of them.
constexpr size_t kMaxParametersShown = 24;

std::string ParameterTable(const ModuleSummary& summary) {
  Table parameters(
      {"#", "parameter", "shape", "bytes"},
      {Table::Align::kRight, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight});
  for (size_t i = 0; i < summary.parameters.size() && i < kMaxParametersShown; ++i) {
    const ir::Instruction& parameter = *summary.parameters[i];
    parameters.AddRow({std::to_string(i), "%" + parameter.name(), parameter.shape().ToString(false),
                       FormatBytes(parameter.shape().ByteSize())});
  }
  std::string out = parameters.Render(2);
  if (summary.parameters.size() > kMaxParametersShown) {
    out += fmt::format("  ... and {} more (--json lists all)\n",
                       summary.parameters.size() - kMaxParametersShown);
  }
  return out;
}

}  // namespace

int64_t ArrayElementCount(const ir::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const ir::Shape& element : shape.tuple_shapes()) total += ArrayElementCount(element);
    return total;
  }
  return shape.IsArray() ? shape.ElementCount() : 0;
}

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

double DotAndConvolutionFlops(const cost::FlopCount& flops) {
  double total = 0;
  for (ir::Opcode opcode : {ir::Opcode::kDot, ir::Opcode::kConvolution}) {
    auto it = flops.by_opcode.find(opcode);
    if (it != flops.by_opcode.end()) total += it->second;
  }
  return total;
}

std::vector<std::pair<ir::Opcode, int64_t>> OpcodesByCount(const ModuleSummary& summary) {
  std::vector<std::pair<ir::Opcode, int64_t>> sorted(summary.opcodes.begin(),
                                                     summary.opcodes.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return ir::OpcodeName(a.first) < ir::OpcodeName(b.first);
  });
  return sorted;
}

nlohmann::ordered_json OpcodesJson(const ModuleSummary& summary) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [opcode, count] : OpcodesByCount(summary)) {
    json[std::string(ir::OpcodeName(opcode))] = count;
  }
  return json;
}

nlohmann::ordered_json FlopsByOpcodeJson(const ModuleSummary& summary) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [opcode, flops] : summary.flops.by_opcode) {
    json[std::string(ir::OpcodeName(opcode))] = flops;
  }
  return json;
}

nlohmann::ordered_json ToJson(const ModuleSummary& summary, const std::string& source) {
  nlohmann::ordered_json json;
  json["source"] = source;
  json["module"] = summary.name;
  json["computations"] = summary.computations;
  json["instructions"] = summary.instructions;
  json["opcodes"] = OpcodesJson(summary);
  json["parameters"] = summary.parameter_elements;
  json["parameter_bytes"] = summary.parameter_bytes;
  json["flops"] = summary.flops.flops;
  json["flops_by_opcode"] = FlopsByOpcodeJson(summary);
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

std::string ToText(const ModuleSummary& summary, const std::string& source) {
  std::string out;
  const ir::Instruction* peak = summary.memory.peak_instruction;
  out += fmt::format("module        {}  ({})\n", summary.name, source);
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
  out += "\nentry parameters\n" + ParameterTable(summary);
  out += "\ninstructions by opcode (all computations)\n" + OpcodeTable(summary);
  return out;
}

std::string OpcodeTable(const ModuleSummary& summary) {
  Table opcodes({"opcode", "count", "flops"},
                {Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight});
  for (const auto& [opcode, count] : OpcodesByCount(summary)) {
    auto flops = summary.flops.by_opcode.find(opcode);
    opcodes.AddRow(
        {std::string(ir::OpcodeName(opcode)), std::to_string(count),
         flops == summary.flops.by_opcode.end() ? "" : FormatDecimal(flops->second, "FLOP")});
  }
  return opcodes.Render(2);
}

}  // namespace alpa::tools
