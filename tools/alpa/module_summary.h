// What `alpa inspect` reports about a module: counts, parameters, FLOPs, naive peak memory, as
// text for people and JSON for scripts. Shared by the HLO-file and the zoo reports.
#ifndef ALPA_TOOLS_ALPA_MODULE_SUMMARY_H_
#define ALPA_TOOLS_ALPA_MODULE_SUMMARY_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cost/flop_count.h"
#include "cost/memory_usage.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::tools {

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

Result<ModuleSummary> Summarize(const ir::Module& module);

// Elements of all array leaves of `shape` (tokens and other non-array leaves count 0).
int64_t ArrayElementCount(const ir::Shape& shape);

// FLOPs of dot and convolution instructions: what Alpa's TFLOPS figures count.
double DotAndConvolutionFlops(const cost::FlopCount& flops);

// Opcodes by count, most frequent first, ties by name.
std::vector<std::pair<ir::Opcode, int64_t>> OpcodesByCount(const ModuleSummary& summary);

// {"opcode": count, ...} in OpcodesByCount order, and {"opcode": flops, ...}.
nlohmann::ordered_json OpcodesJson(const ModuleSummary& summary);
nlohmann::ordered_json FlopsByOpcodeJson(const ModuleSummary& summary);

// The report of an HLO file: `source` is its path.
nlohmann::ordered_json ToJson(const ModuleSummary& summary, const std::string& source);
std::string ToText(const ModuleSummary& summary, const std::string& source);

// The table of instructions by opcode with their FLOPs, indented by two spaces.
std::string OpcodeTable(const ModuleSummary& summary);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_MODULE_SUMMARY_H_
