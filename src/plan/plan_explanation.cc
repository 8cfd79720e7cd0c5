#include "plan/plan_explanation.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "plan/memory_summary.h"
#include "plan/plan_document.h"
#include "support/units.h"

namespace alpa::plan {
namespace {

using json = document::Json;
using document::Field;

// A text field for display: "?" when absent or not a string (the document may be hand-edited).
std::string Shown(const json& object, const char* key) {
  const std::string text = document::Text(object, key);
  return text.empty() ? "?" : text;
}

Result<double> Number(const json& object, const char* key, const std::string& path) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) {
    return InvalidArgument("{}: \"{}\" must be a number", path, key);
  }
  return object[key].get<double>();
}

Result<int64_t> Bytes(const json& object, const char* key, const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(double value, Number(object, key, path));
  return static_cast<int64_t>(value);
}

std::string CommText(const json& comm) {
  std::string text;
  if (!comm.is_object()) return text;
  for (const auto& [kind, count] : comm.items()) {
    if (kind == "bytes" || !count.is_number() || count.get<double>() == 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", kind, count.dump());
  }
  return text.empty() ? "none" : text;
}

struct StageFacts {
  double forward_s = 0, backward_s = 0, update_s = 0, busy_s = 0;
  int64_t peak_bytes = 0, device_bytes = 0;
  int64_t static_bytes = 0, activation_bytes = 0, in_flight = 0, temporary_bytes = 0;
  int64_t pending_gradient_bytes = 0, update_temporary_bytes = 0;
  std::string layers, mesh, comm;
};

Result<StageFacts> ReadStage(const json& stage, double micro_batches, const std::string& path) {
  StageFacts facts;
  ALPA_ASSIGN_OR_RETURN(facts.forward_s, Number(stage, "forward_time_s", path));
  ALPA_ASSIGN_OR_RETURN(facts.backward_s, Number(stage, "backward_time_s", path));
  ALPA_ASSIGN_OR_RETURN(facts.update_s, Number(stage, "update_time_s", path));
  ALPA_ASSIGN_OR_RETURN(facts.peak_bytes, Bytes(stage, "peak_memory_bytes", path));
  ALPA_ASSIGN_OR_RETURN(facts.device_bytes, Bytes(stage, "device_memory_bytes", path));
  facts.busy_s = micro_batches * (facts.forward_s + facts.backward_s) + facts.update_s;
  if (stage.contains("memory")) {
    const json& memory = stage["memory"];
    const std::string memory_path = path + ".memory";
    ALPA_ASSIGN_OR_RETURN(facts.static_bytes, Bytes(memory, "static_bytes", memory_path));
    ALPA_ASSIGN_OR_RETURN(facts.activation_bytes,
                          Bytes(memory, "activation_bytes_per_micro_batch", memory_path));
    ALPA_ASSIGN_OR_RETURN(facts.in_flight, Bytes(memory, "micro_batches_in_flight", memory_path));
    ALPA_ASSIGN_OR_RETURN(facts.temporary_bytes, Bytes(memory, "temporary_bytes", memory_path));
    // Plans written before these fields have none.
    if (memory.contains("pending_gradient_bytes")) {
      ALPA_ASSIGN_OR_RETURN(facts.pending_gradient_bytes,
                            Bytes(memory, "pending_gradient_bytes", memory_path));
    }
    if (memory.contains("update_temporary_bytes")) {
      ALPA_ASSIGN_OR_RETURN(facts.update_temporary_bytes,
                            Bytes(memory, "update_temporary_bytes", memory_path));
    }
  }
  facts.layers = document::LayerRange(stage);
  facts.mesh = document::Text(stage, "mesh_config");
  facts.comm = CommText(Field(stage, "comm"));
  return facts;
}

// "static 5.1 GiB + 3 x 1.2 GiB activations + 0.8 GiB temporaries = 9.5 GiB of 16 GiB (59%)",
// with "static 5.1 GiB - 0.3 GiB of gradient sums not yet held + ..." where the peak task comes
// before them, or at the update: "static 5.1 GiB + 2.0 GiB of the update's temporaries = ...".
std::string StageMemoryText(const StageFacts& stage) {
  const std::string total = fmt::format(
      "{} of {} ({:.0f}%)", FormatBytes(stage.peak_bytes), FormatBytes(stage.device_bytes),
      100.0 * static_cast<double>(stage.peak_bytes) / static_cast<double>(stage.device_bytes));
  if (stage.static_bytes == 0 && stage.activation_bytes == 0) return total;
  if (stage.update_temporary_bytes > stage.in_flight * stage.activation_bytes +
                                         stage.temporary_bytes - stage.pending_gradient_bytes) {
    return fmt::format("at the update: static {} + {} of the update's temporaries = {}",
                       FormatBytes(stage.static_bytes), FormatBytes(stage.update_temporary_bytes),
                       total);
  }
  return fmt::format("static {}{} + {} in flight x {} activations + {} temporaries = {}",
                     FormatBytes(stage.static_bytes),
                     stage.pending_gradient_bytes > 0
                         ? fmt::format(" - {} of gradient sums not yet held",
                                       FormatBytes(stage.pending_gradient_bytes))
                         : "",
                     stage.in_flight, FormatBytes(stage.activation_bytes),
                     FormatBytes(stage.temporary_bytes), total);
}

Result<json> AlternativesOf(const json& plan, double step_time_s, std::string& text) {
  json alternatives = json::array();
  if (!Field(plan, "alternatives").is_array()) {
    text += "\nthe plan records no alternatives (plan it again to compare)\n";
    return alternatives;
  }
  text += "\nalternatives priced on the same costs:\n";
  for (const json& alternative : document::Items(plan, "alternatives")) {
    const std::string given = document::Text(alternative, "name");
    const std::string name = given.empty() ? "alternative" : given;
    const auto dim = [&](const char* key) {
      return static_cast<int64_t>(document::Number(alternative, key).value_or(0));
    };
    const std::string shape =
        dim("dp") > 0 ? fmt::format(" (dp {}, op {}, pp {})", dim("dp"), dim("op"), dim("pp")) : "";
    if (const std::optional<double> step = document::Number(alternative, "step_time_s")) {
      const double time = *step;
      const double ratio = time / step_time_s;
      text += fmt::format("  {}{}: {}, {:.2f}x this plan{}\n", name, shape, FormatSeconds(time),
                          ratio, ratio < 1 ? " (faster: the plan was not searched for it)" : "");
      alternatives.push_back({{"name", name}, {"step_time_s", time}, {"ratio", ratio}});
    } else {
      const std::string reason = document::Text(alternative, "error");
      const std::string error = reason.empty() ? "does not fit" : reason;
      text += fmt::format("  {}{}: rejected: {}\n", name, shape, error);
      alternatives.push_back({{"name", name}, {"error", error}});
    }
  }
  return alternatives;
}

Result<Explanation> ExplainPipeline(const json& plan, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(const double micro_batches, Number(plan, "num_micro_batches", source));
  const json& estimate = Field(plan, "estimate");
  const std::string estimate_path = source + ": estimate";
  ALPA_ASSIGN_OR_RETURN(const double step_time_s, Number(estimate, "step_time_s", estimate_path));
  ALPA_ASSIGN_OR_RETURN(const double pipeline_s, Number(estimate, "pipeline_s", estimate_path));
  ALPA_ASSIGN_OR_RETURN(const double bubble, Number(estimate, "bubble_fraction", estimate_path));
  if (!plan["stages"].is_array() || plan["stages"].empty()) {
    return InvalidArgument("{}: \"stages\" must be a non-empty list", source);
  }
  std::vector<StageFacts> stages;
  for (size_t j = 0; j < plan["stages"].size(); ++j) {
    ALPA_ASSIGN_OR_RETURN(StageFacts stage, ReadStage(plan["stages"][j], micro_batches,
                                                      fmt::format("{}: stages[{}]", source, j)));
    stages.push_back(std::move(stage));
  }
  const auto per_micro_batch = [](const StageFacts& s) { return s.forward_s + s.backward_s; };
  const size_t bottleneck =
      static_cast<size_t>(std::max_element(stages.begin(), stages.end(),
                                           [&](const StageFacts& a, const StageFacts& b) {
                                             return per_micro_batch(a) < per_micro_batch(b);
                                           }) -
                          stages.begin());

  Explanation out;
  const json& model = Field(plan, "model");
  const std::string chunk_text =
      document::ChunksNote(static_cast<int64_t>(document::Number(plan, "num_chunks").value_or(1)),
                           static_cast<int64_t>(stages.size()));
  out.text = fmt::format(
      "{} on {}: {} stage(s), {}{} with {} micro-batches\n"
      "step time {} = pipeline {} (bubble {:.1f}%: devices idle while it fills and drains) "
      "+ {} of updates after the last backward\n\n",
      Shown(model, "name"), Shown(plan, "cluster"), stages.size(), Shown(plan, "schedule"),
      chunk_text, micro_batches, FormatSeconds(step_time_s), FormatSeconds(pipeline_s),
      100 * bubble, FormatSeconds(step_time_s - pipeline_s));
  json stage_json = json::array();
  for (size_t j = 0; j < stages.size(); ++j) {
    const StageFacts& stage = stages[j];
    out.text += fmt::format(
        "stage {}: layers {} on {}{}\n"
        "  time    {} x (forward {} + backward {}) + update {} = {} busy ({:.0f}% of the step)\n"
        "  memory  {}\n"
        "  comm    {} per micro-batch\n",
        j, stage.layers, stage.mesh, j == bottleneck ? "  <- bottleneck" : "", micro_batches,
        FormatSeconds(stage.forward_s), FormatSeconds(stage.backward_s),
        FormatSeconds(stage.update_s), FormatSeconds(stage.busy_s),
        100 * stage.busy_s / step_time_s, StageMemoryText(stage), stage.comm);
    stage_json.push_back({{"index", j},
                          {"busy_s", stage.busy_s},
                          {"time_share", stage.busy_s / step_time_s},
                          {"memory_share", static_cast<double>(stage.peak_bytes) /
                                               static_cast<double>(stage.device_bytes)},
                          {"bottleneck", j == bottleneck}});
  }
  out.text += fmt::format(
      "\nthe bottleneck is stage {}: its forward + backward ({}) sets the pace of the steady "
      "state; the others wait for it.\n",
      bottleneck, FormatSeconds(per_micro_batch(stages[bottleneck])));
  ALPA_ASSIGN_OR_RETURN(json alternatives, AlternativesOf(plan, step_time_s, out.text));
  out.json = {{"kind", "pipeline"},
              {"step_time_s", step_time_s},
              {"stages", stage_json},
              {"alternatives", alternatives}};
  return out;
}

Result<Explanation> ExplainSingleStage(const json& plan, const std::string& source) {
  const json& estimate = Field(plan, "estimate");
  const std::string path = source + ": estimate";
  ALPA_ASSIGN_OR_RETURN(const double step_time_s, Number(estimate, "step_time_s", path));
  ALPA_ASSIGN_OR_RETURN(const double compute_s, Number(estimate, "compute_s", path));
  ALPA_ASSIGN_OR_RETURN(const double communication_s, Number(estimate, "communication_s", path));
  ALPA_ASSIGN_OR_RETURN(const double resharding_s, Number(estimate, "resharding_s", path));
  ALPA_ASSIGN_OR_RETURN(const int64_t peak, Bytes(estimate, "peak_memory_bytes", path));
  ALPA_ASSIGN_OR_RETURN(const int64_t budget, Bytes(estimate, "memory_budget_bytes", path));
  const auto share = [&](double part) { return 100 * part / step_time_s; };
  Explanation out;
  const json& model = Field(plan, "model");
  const json& mesh = Field(plan, "mesh");
  out.text = fmt::format(
      "{} on {}: one stage, method {}, mesh {}\n"
      "step time {} = compute {} ({:.0f}%) + communication {} ({:.0f}%) + resharding {} "
      "({:.0f}%)\n"
      "memory    {} per device of a budget of {} ({:.0f}%)\n"
      "{}"
      "comm      {}\n",
      Shown(model, "name"), Shown(plan, "cluster"), Shown(plan, "method"),
      mesh.is_array() ? mesh.dump() : "?", FormatSeconds(step_time_s), FormatSeconds(compute_s),
      share(compute_s), FormatSeconds(communication_s), share(communication_s),
      FormatSeconds(resharding_s), share(resharding_s), FormatBytes(peak), FormatBytes(budget),
      100.0 * static_cast<double>(peak) / static_cast<double>(budget),
      // Plans written before the peak was recorded do not say where it is.
      estimate.contains("peak") ? fmt::format("          peak {}\n", PeakLine(estimate["peak"]))
                                : std::string(),
      CommText(Field(estimate, "comm")));
  out.json = {{"kind", "single-stage"},
              {"step_time_s", step_time_s},
              {"breakdown",
               {{"compute_s", compute_s},
                {"communication_s", communication_s},
                {"resharding_s", resharding_s},
                {"memory_share", static_cast<double>(peak) / static_cast<double>(budget)}}}};
  if (estimate.contains("peak")) out.json["peak"] = estimate["peak"];
  return out;
}

}  // namespace

Result<Explanation> ExplainPlan(const json& plan, const std::string& source) {
  if (!plan.is_object() || document::Text(plan, "format") != "alpa-plan") {
    return InvalidArgument("{}: not a plan document (alpa plan -o writes one)", source);
  }
  const int64_t version = static_cast<int64_t>(document::Number(plan, "version").value_or(0));
  if (version == 2 && plan.contains("stages")) return ExplainPipeline(plan, source);
  if (version == 1) return ExplainSingleStage(plan, source);
  return InvalidArgument("{}: plan document version {} is not one this alpa reads (1 or 2)", source,
                         version);
}

}  // namespace alpa::plan
