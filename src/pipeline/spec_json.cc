#include "pipeline/spec_json.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "pipeline/schedule.h"
#include "support/json_text.h"

namespace alpa::pipeline {
namespace {

Result<double> TimeJson(const Json& value, const std::string& path) {
  if (!value.is_number()) {
    return InvalidArgument("{}: must be a number of seconds, found {}", path, value.type_name());
  }
  const double seconds = value.get<double>();
  if (!std::isfinite(seconds) || seconds < 0) {
    return InvalidArgument("{}: {} is negative; times must be >= 0", path, value.dump());
  }
  return seconds;
}

Result<int64_t> IntegerJson(const Json& value, const std::string& path) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return InvalidArgument("{}: {} is too large", path, value.dump());
  }
  if (!value.is_number_integer()) {
    return InvalidArgument("{}: must be an integer, found {}", path,
                           value.is_number() ? value.dump() : value.type_name());
  }
  return value.get<int64_t>();
}

Result<std::vector<double>> TimeListJson(const Json& value, const std::string& path, size_t size,
                                         const std::string& size_meaning) {
  if (!value.is_array()) {
    return InvalidArgument("{}: must be a list of seconds, found {}", path, value.type_name());
  }
  if (value.size() != size) {
    return InvalidArgument("{}: has {} entries; it needs {} ({})", path, value.size(), size,
                           size_meaning);
  }
  std::vector<double> times;
  for (size_t i = 0; i < value.size(); ++i) {
    ALPA_ASSIGN_OR_RETURN(double t, TimeJson(value[i], fmt::format("{}[{}]", path, i)));
    times.push_back(t);
  }
  return times;
}

Result<StageSpec> ReadStage(const Json& json, const std::string& path, int micro_batches) {
  ALPA_RETURN_IF_ERROR(
      CheckJsonObject(json, path,
                      {"forward_s", "backward_s", "static_bytes", "activation_bytes",
                       "forward_per_micro_batch_s", "backward_per_micro_batch_s"},
                      "the pipeline"));
  StageSpec stage;
  for (const char* key : {"forward_s", "backward_s"}) {
    auto it = json.find(key);
    if (it == json.end()) return InvalidArgument("{}: missing key '{}'", path, key);
    ALPA_ASSIGN_OR_RETURN(double t, TimeJson(*it, JsonPath(path, key)));
    (std::string_view(key) == "forward_s" ? stage.forward_s : stage.backward_s) = t;
  }
  for (const char* key : {"static_bytes", "activation_bytes"}) {
    auto it = json.find(key);
    if (it == json.end()) continue;
    ALPA_ASSIGN_OR_RETURN(int64_t bytes, IntegerJson(*it, JsonPath(path, key)));
    if (bytes < 0) {
      return InvalidArgument("{}: {} is negative; bytes must be >= 0", JsonPath(path, key), bytes);
    }
    (std::string_view(key) == "static_bytes" ? stage.static_bytes : stage.activation_bytes) = bytes;
  }
  const std::string meaning = "one per micro-batch";
  if (auto it = json.find("forward_per_micro_batch_s"); it != json.end()) {
    ALPA_ASSIGN_OR_RETURN(stage.forward_per_micro_batch_s,
                          TimeListJson(*it, JsonPath(path, "forward_per_micro_batch_s"),
                                       static_cast<size_t>(micro_batches), meaning));
  }
  if (auto it = json.find("backward_per_micro_batch_s"); it != json.end()) {
    ALPA_ASSIGN_OR_RETURN(stage.backward_per_micro_batch_s,
                          TimeListJson(*it, JsonPath(path, "backward_per_micro_batch_s"),
                                       static_cast<size_t>(micro_batches), meaning));
  }
  return stage;
}

Result<PipelineSpec> ReadPipeline(const Json& json) {
  ALPA_RETURN_IF_ERROR(CheckJsonObject(json, "",
                                       {"stages", "micro_batches", "schedule", "chunks",
                                        "forward_transfer_s", "backward_transfer_s"},
                                       "the pipeline"));
  PipelineSpec spec;
  auto micro_batches = json.find("micro_batches");
  if (micro_batches == json.end()) return InvalidArgument("missing key 'micro_batches'");
  ALPA_ASSIGN_OR_RETURN(int64_t b, IntegerJson(*micro_batches, "micro_batches"));
  if (b < 1 || b > 1000000) {
    return InvalidArgument("micro_batches: {} is out of range; it must be from 1 to 1000000", b);
  }
  spec.num_micro_batches = static_cast<int>(b);
  if (auto it = json.find("schedule"); it != json.end()) {
    if (!it->is_string()) {
      return InvalidArgument("schedule: must be a string, found {}", it->type_name());
    }
    Result<ScheduleKind> kind = pipeline::ParseScheduleKind(it->get<std::string>());
    if (!kind.ok()) return kind.status().WithContext("schedule");
    spec.schedule = *kind;
  }
  if (auto it = json.find("chunks"); it != json.end()) {
    ALPA_ASSIGN_OR_RETURN(int64_t v, IntegerJson(*it, "chunks"));
    if (v < 1 || v > 1000000) return InvalidArgument("chunks: {} must be at least 1", v);
    spec.num_chunks = static_cast<int>(v);
  }
  auto stages = json.find("stages");
  if (stages == json.end()) return InvalidArgument("missing key 'stages'");
  if (!stages->is_array() || stages->empty()) {
    return InvalidArgument("stages: must be a non-empty list of stages, found {}",
                           stages->is_array() ? "an empty list" : stages->type_name());
  }
  for (size_t i = 0; i < stages->size(); ++i) {
    ALPA_ASSIGN_OR_RETURN(StageSpec stage, ReadStage((*stages)[i], fmt::format("stages[{}]", i),
                                                     spec.num_micro_batches));
    spec.stages.push_back(std::move(stage));
  }
  const size_t boundaries = spec.stages.size() - 1;
  for (const char* key : {"forward_transfer_s", "backward_transfer_s"}) {
    auto it = json.find(key);
    if (it == json.end()) continue;
    std::vector<double>& transfers = std::string_view(key) == "forward_transfer_s"
                                         ? spec.forward_transfer_s
                                         : spec.backward_transfer_s;
    if (it->is_number()) {
      ALPA_ASSIGN_OR_RETURN(double t, TimeJson(*it, key));
      transfers.assign(boundaries, t);
    } else {
      ALPA_ASSIGN_OR_RETURN(transfers,
                            TimeListJson(*it, key, boundaries, "one per boundary: stages - 1"));
    }
  }
  ALPA_RETURN_IF_ERROR(CheckPipelineLayout(spec, "chunks:", "micro_batches:"));
  return spec;
}

}  // namespace

Status CheckPipelineLayout(const PipelineSpec& spec, const std::string& chunks_name,
                           const std::string& micro_batches_name) {
  const int num_stages = static_cast<int>(spec.stages.size());
  if (spec.num_chunks < 1 || num_stages % spec.num_chunks != 0) {
    return InvalidArgument("{} {}: must be >= 1 and divide the {} stages", chunks_name,
                           spec.num_chunks, num_stages);
  }
  if (spec.num_chunks > 1 && spec.schedule != ScheduleKind::kInterleaved1F1B) {
    return InvalidArgument("{} {}: model chunks need the interleaved-1f1b schedule, not {}",
                           chunks_name, spec.num_chunks, pipeline::ScheduleKindName(spec.schedule));
  }
  const int num_devices = num_stages / spec.num_chunks;
  if (spec.num_chunks > 1 && spec.num_micro_batches % num_devices != 0) {
    return InvalidArgument(
        "{} {}: interleaved-1f1b with {} chunks needs a multiple of the {} devices ({} stages / {} "
        "chunks)",
        micro_batches_name, spec.num_micro_batches, spec.num_chunks, num_devices, num_stages,
        spec.num_chunks);
  }
  return Status::Ok();
}

Result<PipelineSpec> ParsePipelineJson(std::string_view text, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(Json json, ParseJsonText(text, source));
  Result<PipelineSpec> spec = ReadPipeline(json);
  if (!spec.ok()) return spec.status().WithContext(source);
  return spec;
}

}  // namespace alpa::pipeline
