// Reading the plan document (tools/alpa/pipeshard_plan.h) defensively, for the HTML report: a
// hand-written or older document may lack any field or hold the wrong type, and a reader then
// answers "absent" (null, nullopt, "", an empty list, "-") instead of throwing.
#ifndef ALPA_TOOLS_ALPA_PLAN_DOCUMENT_H_
#define ALPA_TOOLS_ALPA_PLAN_DOCUMENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace alpa::tools::plan_document {

using Json = nlohmann::ordered_json;

// `object[key]`, or null when absent.
const Json& Field(const Json& object, const char* key);
std::optional<double> Number(const Json& object, const char* key);
std::string Text(const Json& object, const char* key);
// The array `object[key]`, empty when absent or not an array.
const Json& Items(const Json& object, const char* key);

// "a..b" (or "a") from the stage's [first, last] layers; "-" when malformed.
std::string LayerRange(const Json& stage);
// The integers of the array `object[key]` (the rest of a malformed list skipped).
std::vector<int64_t> Integers(const Json& object, const char* key);
// The stage's device ids: Integers(stage, "devices").
std::vector<int64_t> Devices(const Json& stage);
// "4..7" for consecutive ids (the usual sub-mesh), else the list; "-" for none.
std::string DeviceRange(const std::vector<int64_t>& devices);
// " (2 chunks per device: stage j runs on stage j % 4's devices)" for an interleaved plan of
// `num_stages` stages in `num_chunks` chunks per device; "" for one chunk.
std::string ChunksNote(int64_t num_chunks, int64_t num_stages);

}  // namespace alpa::tools::plan_document

#endif  // ALPA_TOOLS_ALPA_PLAN_DOCUMENT_H_
