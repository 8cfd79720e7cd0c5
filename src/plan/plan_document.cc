#include "plan/plan_document.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "support/file.h"

namespace alpa::plan::document {

// `object[key]`, or null when absent: hand-written and older documents may lack any field.
const Json& Field(const Json& object, const char* key) {
  static const Json kMissing;
  if (!object.is_object()) return kMissing;
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}

std::optional<double> Number(const Json& object, const char* key) {
  const Json& value = Field(object, key);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::string Text(const Json& object, const char* key) {
  const Json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

// The array `object[key]`, empty when absent or not an array.
const Json& Items(const Json& object, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& value = Field(object, key);
  return value.is_array() ? value : kEmpty;
}

// "a..b" (or "a") from the stage's [first, last] layers.
std::string LayerRange(const Json& stage) {
  const Json& layers = Items(stage, "layers");
  if (layers.size() != 2 || !layers[0].is_number() || !layers[1].is_number()) return "-";
  const auto first = layers[0].get<int64_t>(), last = layers[1].get<int64_t>();
  return first == last ? fmt::format("{}", first) : fmt::format("{}..{}", first, last);
}

std::vector<int64_t> Integers(const Json& object, const char* key) {
  std::vector<int64_t> integers;
  for (const Json& item : Items(object, key)) {
    if (item.is_number_integer()) integers.push_back(item.get<int64_t>());
  }
  return integers;
}

std::vector<int64_t> Devices(const Json& stage) { return Integers(stage, "devices"); }

// "4..7" for consecutive ids (the usual sub-mesh), else the list.
std::string DeviceRange(const std::vector<int64_t>& devices) {
  if (devices.empty()) return "-";
  bool consecutive = true;
  for (size_t i = 1; i < devices.size(); ++i) consecutive &= devices[i] == devices[i - 1] + 1;
  if (consecutive) {
    return devices.size() == 1 ? fmt::format("{}", devices[0])
                               : fmt::format("{}..{}", devices.front(), devices.back());
  }
  return fmt::format("{}", fmt::join(devices, ", "));
}

std::string ChunksNote(int64_t num_chunks, int64_t num_stages) {
  if (num_chunks <= 1) return "";
  return fmt::format(" ({} chunks per device: stage j runs on stage j % {}'s devices)", num_chunks,
                     num_stages / num_chunks);
}

namespace {

// Every field that differs, with the plan's value first. `fingerprint` is of the `module` the plan
// document fingerprints: the train step (one stage) or the loss (pipelined).
Status CheckMadeFor(const Json& plan, const std::string& path, const RunIdentity& run,
                    std::string_view module, const std::string& fingerprint) {
  std::vector<std::string> differences;
  const Json& model = Field(plan, "model");
  if (Text(model, "name") != run.model) {
    differences.push_back(
        fmt::format("model {} in the plan, {} here", Text(model, "name"), run.model));
  } else if (Text(model, "fingerprint") != fingerprint) {
    differences.push_back(fmt::format(
        "{} fingerprint {} in the plan, {} here (another --batch, --dtype, --optimizer, "
        "--micro-batches, ... than the plan was made with)",
        module, Text(model, "fingerprint"), fingerprint));
  }
  if (Text(plan, "cluster") != run.cluster) {
    differences.push_back(
        fmt::format("cluster {} in the plan, {} here", Text(plan, "cluster"), run.cluster));
  }
  if (!differences.empty()) {
    return InvalidArgument("{} was made for another run: {}; re-plan with alpa plan", path,
                           fmt::join(differences, "; "));
  }
  return Status::Ok();
}

// A document's "format" says it is a plan; errors name `source`.
Status CheckIsPlanDocument(const Json& plan, const std::string& source) {
  if (!plan.is_object() || Text(plan, "format") != "alpa-plan") {
    return InvalidArgument(
        "{}: not a plan document (no \"format\": \"alpa-plan\"); write one with "
        "alpa plan MODEL --cluster SPEC -o plan.json",
        source);
  }
  return Status::Ok();
}

}  // namespace

Result<Json> LoadPlanDocument(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json plan = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ALPA_RETURN_IF_ERROR(CheckIsPlanDocument(plan, path));
  return plan;
}

Result<std::optional<ManualStages>> ReadSavedPipelinedStages(const std::string& path,
                                                             const RunIdentity& run) {
  ALPA_ASSIGN_OR_RETURN(const Json plan, LoadPlanDocument(path));
  if (Items(plan, "stages").empty()) return std::optional<ManualStages>();
  ALPA_ASSIGN_OR_RETURN(ManualStages stages, PipelinedStagesOf(plan, path, run));
  return std::optional(std::move(stages));
}

Result<ManualStages> PipelinedStagesOf(const Json& plan, const std::string& source,
                                       const RunIdentity& run) {
  ALPA_RETURN_IF_ERROR(CheckIsPlanDocument(plan, source));
  ALPA_RETURN_IF_ERROR(CheckMadeFor(plan, source, run, "loss", run.loss_fingerprint));
  return ParseSavedPlanStages(plan.dump(), source);
}

Result<SavedPlan> ReadSavedPlan(const std::string& path, const RunIdentity& run) {
  ALPA_ASSIGN_OR_RETURN(const Json plan, LoadPlanDocument(path));
  ALPA_RETURN_IF_ERROR(CheckMadeFor(plan, path, run, "train step", run.step_fingerprint));
  SavedPlan saved;
  saved.method = Text(plan, "method");
  if (saved.method == "auto" || saved.method == "pipeshard") saved.method = "shard";  // one stage
  const Json& mesh = Field(plan, "mesh");
  std::vector<std::string> dims;
  for (const Json& dim : mesh.is_array() ? mesh : Json::array()) {
    if (dim.is_number_integer()) dims.push_back(std::to_string(dim.get<int64_t>()));
  }
  if (dims.empty() || dims.size() != mesh.size()) {
    return InvalidArgument("{}: \"mesh\" is not a list of integers", path);
  }
  saved.mesh = fmt::format("{}", fmt::join(dims, "x"));
  if (Field(plan, "batch_axis").is_number_integer()) {
    saved.batch_axis = Field(plan, "batch_axis").get<int64_t>();
  }
  const Json& strategies = Field(plan, "strategies");
  if (!strategies.is_object() || strategies.empty()) {
    return InvalidArgument("{}: no \"strategies\" (one strategy name per instruction)", path);
  }
  for (const auto& [instruction, strategy] : strategies.items()) {
    if (!strategy.is_string()) {
      return InvalidArgument("{}: strategy of '{}' is not a string", path, instruction);
    }
    saved.strategies[instruction] = strategy.get<std::string>();
  }
  saved.step_time_s = Number(Field(plan, "estimate"), "step_time_s").value_or(0);
  return saved;
}

}  // namespace alpa::plan::document
