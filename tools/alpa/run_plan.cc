#include "tools/alpa/run_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "support/file.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/plan_document.h"

namespace alpa::tools {

Result<RunPlan> ReadRunPlan(const std::string& path, const ZooStep& zoo,
                            const std::string& cluster) {
  using plan_document::Field;
  using plan_document::Json;
  using plan_document::Text;
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const Json plan = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!plan.is_object() || Text(plan, "format") != "alpa-plan") {
    return InvalidArgument(
        "{}: not a plan document (no \"format\": \"alpa-plan\"); write one with "
        "alpa plan MODEL --cluster SPEC -o plan.json",
        path);
  }
  if (plan_document::Items(plan, "stages").size() > 1) {
    return Unimplemented(
        "{}: a pipelined plan of {} stages; running pipelines needs the pipeline runtime, which "
        "does not exist yet: plan one stage with alpa plan --method shard",
        path, plan_document::Items(plan, "stages").size());
  }
  // Every field that differs, with the plan's value first.
  std::vector<std::string> differences;
  const Json& model = Field(plan, "model");
  const std::string& name = zoo.zoo.entry.name;
  if (Text(model, "name") != name) {
    differences.push_back(fmt::format("model {} in the plan, {} here", Text(model, "name"), name));
  } else if (Text(model, "fingerprint") != ModuleFingerprint(*zoo.step)) {
    differences.push_back(fmt::format(
        "train step fingerprint {} in the plan, {} here (another --batch, --dtype, --optimizer, "
        "... than the plan was made with)",
        Text(model, "fingerprint"), ModuleFingerprint(*zoo.step)));
  }
  if (Text(plan, "cluster") != cluster) {
    differences.push_back(
        fmt::format("cluster {} in the plan, {} here", Text(plan, "cluster"), cluster));
  }
  if (!differences.empty()) {
    return InvalidArgument("{} was made for another run: {}; re-plan with alpa plan", path,
                           fmt::join(differences, "; "));
  }
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
