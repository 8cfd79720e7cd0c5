#include "plan/memory_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "support/table.h"
#include "support/units.h"

namespace alpa::plan {
namespace {

constexpr cost::MemoryCategory kCategories[] = {
    cost::MemoryCategory::kWeights,         cost::MemoryCategory::kOptimizerState,
    cost::MemoryCategory::kGradients,       cost::MemoryCategory::kSavedActivations,
    cost::MemoryCategory::kTemporaries,     cost::MemoryCategory::kBatch,
    cost::MemoryCategory::kOtherParameters, cost::MemoryCategory::kCollectiveBuffers};

std::string Share(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%",
                                 100.0 * static_cast<double>(part) / static_cast<double>(whole))
                   : "-";
}

const cost::ValueInfo* PeakValue(const cost::MemoryModel& memory) {
  const int64_t step = memory.liveness.peak_step;
  return step < 0 ? nullptr : &memory.values[static_cast<size_t>(step)];
}

const ir::Instruction* PeakInstruction(const cost::MemoryModel& memory) {
  const int64_t step = memory.liveness.peak_step;
  return step < 0 ? nullptr : memory.liveness.order[static_cast<size_t>(step)];
}

// Bytes live at the peak by category, keyed by MemoryCategoryKey.
nlohmann::ordered_json AtPeakJson(const cost::MemoryModel& memory) {
  nlohmann::ordered_json at_peak = nlohmann::ordered_json::object();
  for (cost::MemoryCategory category : kCategories) {
    at_peak[std::string(cost::MemoryCategoryKey(category))] = memory.at_peak[category];
  }
  return at_peak;
}

}  // namespace

std::string MemoryText(const cost::MemoryModel& memory) {
  const int64_t peak = memory.liveness.peak_bytes;
  std::string out;
  if (const ir::Instruction* at = PeakInstruction(memory)) {
    out += fmt::format("peak memory   {} on one device running it all (naive schedule), at %{}\n",
                       FormatBytes(peak), at->name());
    out += fmt::format("              ({} pass, step {} of {})\n",
                       cost::PassName(PeakValue(memory)->pass), memory.liveness.peak_step + 1,
                       memory.liveness.steps());
  } else {
    out += fmt::format("peak memory   {} (an empty computation)\n", FormatBytes(peak));
  }
  Table table({"at the peak", "bytes", "share"},
              {Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight});
  for (cost::MemoryCategory category : kCategories) {
    table.AddRow({std::string(cost::MemoryCategoryName(category)),
                  FormatBytes(memory.at_peak[category]), Share(memory.at_peak[category], peak)});
  }
  table.AddRow({"total", FormatBytes(peak), Share(peak, peak)});
  out += "\n" + table.Render(2) + "\n";
  out += fmt::format("static        {} held all step (weights + gradients + optimizer state)\n",
                     FormatBytes(memory.StaticBytes()));
  out += fmt::format(
      "activations   {} saved for the backward pass; {} per micro-batch ({} of them) over {} "
      "layer(s)\n",
      FormatBytes(memory.saved_activation_bytes),
      FormatBytes(memory.SavedActivationBytesPerMicroBatch(0, memory.num_layers)),
      memory.num_micro_batches, memory.num_layers);
  return out;
}

nlohmann::ordered_json MemoryJson(const cost::MemoryModel& memory) {
  nlohmann::ordered_json per_layer = nlohmann::ordered_json::array();
  for (int64_t layer = 0; layer < memory.num_layers; ++layer) {
    per_layer.push_back(memory.SavedActivationBytesPerMicroBatch(layer, layer + 1));
  }
  const ir::Instruction* at = PeakInstruction(memory);
  nlohmann::ordered_json json;
  json["schedule"] = "post order";
  json["steps"] = memory.liveness.steps();
  json["peak_bytes"] = memory.liveness.peak_bytes;
  json["peak_instruction"] = at ? at->name() : "";
  json["peak_step"] = memory.liveness.peak_step;
  json["peak_pass"] = at ? std::string(cost::PassName(PeakValue(memory)->pass)) : "";
  json["at_peak"] = AtPeakJson(memory);
  json["static_bytes"] = memory.StaticBytes();
  json["gradient_bytes"] = memory.gradient_bytes;
  json["saved_activation_bytes"] = memory.saved_activation_bytes;
  json["micro_batches"] = memory.num_micro_batches;
  json["layers"] = memory.num_layers;
  json["saved_activation_bytes_per_micro_batch"] =
      memory.SavedActivationBytesPerMicroBatch(0, memory.num_layers);
  json["saved_activation_bytes_per_micro_batch_by_layer"] = std::move(per_layer);
  return json;
}

nlohmann::ordered_json PeakJson(const cost::MemoryModel& memory) {
  const ir::Instruction* at = PeakInstruction(memory);
  return {{"pass", at ? std::string(cost::PassName(PeakValue(memory)->pass)) : ""},
          {"instruction", at ? at->name() : ""},
          {"at_peak", AtPeakJson(memory)}};
}

std::string PeakLine(const nlohmann::ordered_json& peak) {
  // A hand-edited document may hold anything here: what is not as written shows as "?".
  if (!peak.is_object()) return "(where: not recorded)";
  auto text = [&](const char* key) {
    const auto it = peak.find(key);
    return it != peak.end() && it->is_string() ? it->get<std::string>() : std::string("?");
  };
  const auto at_peak = peak.find("at_peak");
  if (at_peak == peak.end() || !at_peak->is_object()) return "(where: not recorded)";
  std::vector<std::pair<int64_t, std::string>> live;  // (bytes, category), largest first
  int64_t total = 0;
  for (cost::MemoryCategory category : kCategories) {
    const auto bytes = at_peak->find(std::string(cost::MemoryCategoryKey(category)));
    if (bytes == at_peak->end() || !bytes->is_number_integer() || bytes->get<int64_t>() <= 0) {
      continue;
    }
    live.emplace_back(bytes->get<int64_t>(), std::string(cost::MemoryCategoryName(category)));
    total += bytes->get<int64_t>();
  }
  std::stable_sort(live.begin(), live.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> parts;
  for (const auto& [bytes, category] : live) {
    parts.push_back(fmt::format("{} {} ({})", category, FormatBytes(bytes), Share(bytes, total)));
  }
  return fmt::format("in the {} pass, at %{}: {}", text("pass"), text("instruction"),
                     fmt::join(parts, ", "));
}

}  // namespace alpa::plan
