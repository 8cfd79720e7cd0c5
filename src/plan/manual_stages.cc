#include "plan/manual_stages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "pipeline/layer_clustering.h"

namespace alpa::plan {
namespace {

using json = nlohmann::json;

// A list of non-negative integers (at least `min_size`) at `path`.
Result<std::vector<int64_t>> Integers(const json& value, const std::string& path, size_t min_size) {
  if (!value.is_array() || value.size() < min_size) {
    return InvalidArgument("{}: must be a list of at least {} integer(s)", path, min_size);
  }
  std::vector<int64_t> integers;
  for (const json& element : value) {
    if (!element.is_number_integer() || element.get<int64_t>() < 0) {
      return InvalidArgument("{}: {} is not a non-negative integer", path, element.dump());
    }
    integers.push_back(element.get<int64_t>());
  }
  return integers;
}

Result<ManualStage> ParseStage(const json& stage, const std::string& path) {
  if (!stage.is_object()) return InvalidArgument("{}: must be an object", path);
  ManualStage parsed;
  for (const char* key : {"layers", "submesh", "logical_mesh"}) {
    if (!stage.contains(key)) return InvalidArgument("{}: missing \"{}\"", path, key);
  }
  ALPA_ASSIGN_OR_RETURN(parsed.layers, Integers(stage["layers"], path + ".layers", 1));
  ALPA_ASSIGN_OR_RETURN(parsed.submesh, Integers(stage["submesh"], path + ".submesh", 2));
  ALPA_ASSIGN_OR_RETURN(parsed.logical_mesh,
                        Integers(stage["logical_mesh"], path + ".logical_mesh", 1));
  if (stage.contains("force_batch_dim_to_mesh_dim")) {
    const json& axis = stage["force_batch_dim_to_mesh_dim"];
    if (!axis.is_null() && !(axis.is_number_integer() && axis.get<int64_t>() == 0)) {
      return InvalidArgument(
          "{}.force_batch_dim_to_mesh_dim: {} is not supported; give 0 (the batch over the "
          "first mesh axis) or leave it out",
          path, axis.dump());
    }
    parsed.force_batch = !axis.is_null();
  }
  if (stage.contains("device_type")) {
    if (!stage["device_type"].is_string()) {
      return InvalidArgument("{}.device_type: must be a device type's name", path);
    }
    parsed.device_type = stage["device_type"].get<std::string>();
  }
  return parsed;
}

// The first model layer of each of `groups` contiguous groups, FLOPs balanced, then the end.
Result<std::vector<int64_t>> GroupBoundaries(const LayerCostTable& table, int64_t groups) {
  std::vector<int64_t> boundaries;
  if (groups == table.num_layers) {
    for (int64_t k = 0; k <= table.num_layers; ++k) boundaries.push_back(k);
    return boundaries;
  }
  std::vector<pipeline::ClusteringUnit> units;
  std::vector<pipeline::ValueEdge> edges;
  for (int64_t k = 0; k < table.num_layers; ++k) {
    units.push_back({.cost = table.flops[static_cast<size_t>(k)], .heavy = true});
    if (k + 1 < table.num_layers) {
      edges.push_back({k, k + 1, table.output_bytes[static_cast<size_t>(k)], k});
    }
  }
  ALPA_ASSIGN_OR_RETURN(pipeline::LayerClustering clustering,
                        pipeline::ClusterUnitsIntoLayers(units, edges, {.num_layers = groups}));
  for (int64_t k = 0; k < table.num_layers; ++k) {
    if (k == 0 || clustering.layer_of_unit[static_cast<size_t>(k)] !=
                      clustering.layer_of_unit[static_cast<size_t>(k - 1)]) {
      boundaries.push_back(k);
    }
  }
  boundaries.push_back(table.num_layers);
  return boundaries;
}

Result<int64_t> FindConfig(const LayerCostTable& table, const ManualStage& stage, size_t j) {
  std::vector<int64_t> logical = stage.logical_mesh;
  if (logical.size() == 2 && logical[1] == 1) logical.pop_back();  // (a, 1) is the 1-D [a]
  // Without a forced batch, (1, a) is the 1-D [a] too (Alpa's suites write both).
  if (!stage.force_batch && logical.size() == 2 && logical[0] == 1) logical.erase(logical.begin());
  // The device type picks among a heterogeneous cluster's host types; on a homogeneous cluster a
  // plan made for other devices re-costs on these.
  const bool by_type = !stage.device_type.empty() && table.device_types.size() > 1;
  if (by_type &&
      std::ranges::find(table.device_types, stage.device_type) == table.device_types.end()) {
    return InvalidArgument("stages[{}]: the cluster has no {} devices (it has {})", j,
                           stage.device_type, fmt::join(table.device_types, ", "));
  }
  for (size_t c = 0; c < table.configs.size(); ++c) {
    const MeshConfig& config = table.configs[c];
    // On one device there is nothing to force.
    const bool force = stage.force_batch && config.submesh.devices() > 1;
    const bool type_matches =
        !by_type ||
        table.device_types[static_cast<size_t>(config.submesh.host_type)] == stage.device_type;
    if (config.submesh.shape == stage.submesh && config.logical_shape == logical &&
        config.force_batch == force && type_matches) {
      return static_cast<int64_t>(c);
    }
  }
  const std::string where = fmt::format(
      "stages[{}]: the sub-mesh [{}]{} as logical mesh [{}]{}", j, fmt::join(stage.submesh, ","),
      by_type ? " of " + stage.device_type : "", fmt::join(stage.logical_mesh, ","),
      stage.force_batch ? " with the batch forced" : "");
  // EnumerateMeshConfigs skips a forced batch that does not split evenly over axis 0.
  if (stage.force_batch && table.micro_batch_size % logical.front() != 0) {
    return InvalidArgument(
        "{}: a micro-batch of {} does not split over {} data-parallel devices; use a number of "
        "micro-batches that leaves a multiple of {} per micro-batch",
        where, table.micro_batch_size, logical.front(), logical.front());
  }
  return InvalidArgument(
      "{} is not among the configurations planned (sub-meshes of the cluster's space, logical "
      "meshes of the logical space: try --logical-space all)",
      where);
}

Result<ManualStages> ParseManualStagesJson(const json& document, const std::string& source) {
  ManualStages manual;
  if (!document.contains("layers") || !document["layers"].is_number_integer() ||
      document["layers"].get<int64_t>() < 1) {
    return InvalidArgument(
        "{}: \"layers\" must be a positive integer (how many layers the "
        "stages' layer ids count)",
        source);
  }
  manual.num_layers = document["layers"].get<int64_t>();
  if (document.contains("num_micro_batches")) {
    const json& value = document["num_micro_batches"];
    if (!value.is_number_integer() || value.get<int64_t>() < 1) {
      return InvalidArgument("{}: num_micro_batches must be a positive integer", source);
    }
    manual.num_micro_batches = value.get<int64_t>();
  }
  if (document.contains("schedule")) {
    if (!document["schedule"].is_string()) {
      return InvalidArgument("{}: schedule must be \"gpipe\", \"1f1b\" or \"interleaved-1f1b\"",
                             source);
    }
    Result<pipeline::ScheduleKind> schedule =
        pipeline::ParseScheduleKind(document["schedule"].get<std::string>());
    if (!schedule.ok()) return schedule.status().WithContext(source + ": schedule");
    manual.schedule = *schedule;
  }
  if (document.contains("num_chunks")) {
    const json& value = document["num_chunks"];
    if (!value.is_number_integer() || value.get<int64_t>() < 1) {
      return InvalidArgument("{}: num_chunks must be a positive integer", source);
    }
    manual.num_chunks = value.get<int64_t>();
  }
  if (!document.contains("stages") || !document["stages"].is_array() ||
      document["stages"].empty()) {
    return InvalidArgument("{}: \"stages\" must be a non-empty list", source);
  }
  for (size_t j = 0; j < document["stages"].size(); ++j) {
    ALPA_ASSIGN_OR_RETURN(ManualStage stage, ParseStage(document["stages"][j],
                                                        fmt::format("{}: stages[{}]", source, j)));
    manual.stages.push_back(std::move(stage));
  }
  return manual;
}

}  // namespace

Result<ManualStages> ParseManualStages(const std::string& text, const std::string& source) {
  const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return InvalidArgument("{}: not a JSON object", source);
  }
  return ParseManualStagesJson(document, source);
}

Result<ManualStages> ParseSavedPlanStages(const std::string& text, const std::string& source) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Compared as JSON values, not read with value(): a field of another type is not a plan
  // document (value() throws on it; the fuzzer found "format": 6).
  if (document.is_discarded() || !document.is_object() || !document.contains("format") ||
      document["format"] != "alpa-plan") {
    return InvalidArgument("{}: not a plan document (alpa plan -o writes one)", source);
  }
  if (!document.contains("version") || document["version"] != 2 || !document.contains("stages")) {
    return InvalidArgument(
        "{}: a single-stage plan (version {}); only pipelined plans (version 2, from --method "
        "pipeshard or uniform) have stages to re-cost",
        source, document.contains("version") ? document["version"].dump() : "missing");
  }
  if (!document.contains("num_layers")) {
    return InvalidArgument("{}: no \"num_layers\"; plan the model again to save a complete plan",
                           source);
  }
  // Its stages' [first, last] become the manual format's layer ids over the model's layers.
  document["layers"] = document["num_layers"];
  if (!document["stages"].is_array()) {
    return InvalidArgument("{}: \"stages\" must be a non-empty list", source);
  }
  for (size_t j = 0; j < document["stages"].size(); ++j) {
    json& stage = document["stages"][j];
    const std::string path = fmt::format("{}: stages[{}].layers", source, j);
    if (!stage.is_object() || !stage.contains("layers")) {
      return InvalidArgument("{}: missing", path);
    }
    ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> range, Integers(stage["layers"], path, 2));
    if (range.size() != 2 || range[1] < range[0]) {
      return InvalidArgument("{}: must be [first, last] with first <= last", path);
    }
    json ids = json::array();
    for (int64_t k = range[0]; k <= range[1]; ++k) ids.push_back(k);
    stage["layers"] = std::move(ids);
  }
  return ParseManualStagesJson(document, source);
}

Result<std::vector<StageChoice>> ResolveManualStages(const ManualStages& manual,
                                                     const LayerCostTable& table) {
  if (manual.num_layers > table.num_layers) {
    return InvalidArgument("\"layers\": {} layers, but the model has only {} to group",
                           manual.num_layers, table.num_layers);
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> boundaries, GroupBoundaries(table, manual.num_layers));
  std::vector<StageChoice> stages;
  int64_t next = 0;
  for (size_t j = 0; j < manual.stages.size(); ++j) {
    const ManualStage& stage = manual.stages[j];
    for (int64_t id : stage.layers) {
      if (id != next) {
        return InvalidArgument(
            "stages[{}].layers: layer {} where {} comes next; the stages must list layers "
            "0..{} in order, each once",
            j, id, next < manual.num_layers ? std::to_string(next) : "nothing",
            manual.num_layers - 1);
      }
      ++next;
    }
    ALPA_ASSIGN_OR_RETURN(int64_t config, FindConfig(table, stage, j));
    stages.push_back({boundaries[static_cast<size_t>(stage.layers.front())],
                      boundaries[static_cast<size_t>(stage.layers.back()) + 1] - 1, config});
  }
  if (next != manual.num_layers) {
    return InvalidArgument("the stages cover layers 0..{}; layers {}..{} are missing", next - 1,
                           next, manual.num_layers - 1);
  }
  return stages;
}

}  // namespace alpa::plan
