#include "tools/alpa/run_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "support/file.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/plan_document.h"

namespace alpa::tools {

namespace {

using plan_document::Field;
using plan_document::Json;
using plan_document::Text;

Result<Json> LoadPlanDocument(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json plan = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!plan.is_object() || Text(plan, "format") != "alpa-plan") {
    return InvalidArgument(
        "{}: not a plan document (no \"format\": \"alpa-plan\"); write one with "
        "alpa plan MODEL --cluster SPEC -o plan.json",
        path);
  }
  return plan;
}

// Every field that differs, with the plan's value first. `fingerprint` is of the `module` the plan
// document fingerprints: the train step (one stage) or the loss (pipelined).
Status CheckMadeFor(const Json& plan, const std::string& path, const ZooStep& zoo,
                    std::string_view module, const std::string& fingerprint,
                    const std::string& cluster) {
  std::vector<std::string> differences;
  const Json& model = Field(plan, "model");
  const std::string& name = zoo.zoo.entry.name;
  if (Text(model, "name") != name) {
    differences.push_back(fmt::format("model {} in the plan, {} here", Text(model, "name"), name));
  } else if (Text(model, "fingerprint") != fingerprint) {
    differences.push_back(fmt::format(
        "{} fingerprint {} in the plan, {} here (another --batch, --dtype, --optimizer, "
        "--micro-batches, ... than the plan was made with)",
        module, Text(model, "fingerprint"), fingerprint));
  }
  if (Text(plan, "cluster") != cluster) {
    differences.push_back(
        fmt::format("cluster {} in the plan, {} here", Text(plan, "cluster"), cluster));
  }
  if (!differences.empty()) {
    return InvalidArgument("{} was made for another run: {}; re-plan with alpa plan", path,
                           fmt::join(differences, "; "));
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<plan::ManualStages>> ReadPipelinedRunPlan(const std::string& path,
                                                               const ZooStep& zoo,
                                                               const std::string& cluster) {
  ALPA_ASSIGN_OR_RETURN(const Json plan, LoadPlanDocument(path));
  if (plan_document::Items(plan, "stages").empty()) return std::optional<plan::ManualStages>();
  ALPA_RETURN_IF_ERROR(
      CheckMadeFor(plan, path, zoo, "loss", ModuleFingerprint(*zoo.zoo.model.loss), cluster));
  ALPA_ASSIGN_OR_RETURN(plan::ManualStages stages, plan::ParseSavedPlanStages(plan.dump(), path));
  return std::optional(std::move(stages));
}

Result<RunPlan> ReadRunPlan(const std::string& path, const ZooStep& zoo,
                            const std::string& cluster) {
  ALPA_ASSIGN_OR_RETURN(const Json plan, LoadPlanDocument(path));
  ALPA_RETURN_IF_ERROR(
      CheckMadeFor(plan, path, zoo, "train step", ModuleFingerprint(*zoo.step), cluster));
  RunPlan run;
  run.method = Text(plan, "method");
  if (run.method == "auto" || run.method == "pipeshard") run.method = "shard";  // one stage
  const Json& mesh = Field(plan, "mesh");
  std::vector<std::string> dims;
  for (const Json& dim : mesh.is_array() ? mesh : Json::array()) {
    if (dim.is_number_integer()) dims.push_back(std::to_string(dim.get<int64_t>()));
  }
  if (dims.empty() || dims.size() != mesh.size()) {
    return InvalidArgument("{}: \"mesh\" is not a list of integers", path);
  }
  run.mesh = fmt::format("{}", fmt::join(dims, "x"));
  if (Field(plan, "batch_axis").is_number_integer()) {
    run.batch_axis = Field(plan, "batch_axis").get<int64_t>();
  }
  const Json& strategies = Field(plan, "strategies");
  if (!strategies.is_object() || strategies.empty()) {
    return InvalidArgument("{}: no \"strategies\" (one strategy name per instruction)", path);
  }
  for (const auto& [instruction, strategy] : strategies.items()) {
    if (!strategy.is_string()) {
      return InvalidArgument("{}: strategy of '{}' is not a string", path, instruction);
    }
    run.strategies[instruction] = strategy.get<std::string>();
  }
  run.step_time_s = plan_document::Number(Field(plan, "estimate"), "step_time_s").value_or(0);
  return run;
}

}  // namespace alpa::tools
