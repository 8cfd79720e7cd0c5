// Reading a plan document ({"format": "alpa-plan", ...}: pipeshard_document.h for a pipelined plan,
// api/single_stage_document.h for a single-stage one), for whoever reads one back: `alpa explain`,
// the HTML report, and `alpa run --plan` through ReadSavedPlan and ReadSavedPipelinedStages.
//
// The field readers are defensive: a hand-written or older document may lack any field or hold
// the wrong type, and a reader then answers "absent" (null, nullopt, "", an empty list, "-")
// instead of throwing. A saved plan is checked to be for the run at hand: the model's name, the
// fingerprint of the module it was planned for and the cluster text, every field that differs
// named with both values.
#ifndef ALPA_PLAN_PLAN_DOCUMENT_H_
#define ALPA_PLAN_PLAN_DOCUMENT_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/manual_stages.h"
#include "support/status.h"

namespace alpa::plan::document {

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

// The run a saved plan is checked against: the model's name, the fingerprint of the module the
// plan fingerprints (the train step for a single-stage plan, the loss for a pipelined one) and
// the cluster as the user wrote it.
struct RunIdentity {
  std::string model;
  std::string step_fingerprint;
  std::string loss_fingerprint;
  std::string cluster;
};

// A single-stage plan as `alpa run --plan` re-plans it: its method, mesh and batch axis, and every
// instruction's strategy to pin.
struct SavedPlan {
  std::string method;  // a pipelined document's one-stage methods read as "shard"
  std::string mesh;    // "2x2"
  std::optional<int64_t> batch_axis;
  std::map<std::string, std::string> strategies;  // instruction -> strategy name
  double step_time_s = 0;                         // the saved estimate
};

// The document at `path`; errors: an unreadable file, or JSON that is not a plan document (what
// writes one).
Result<Json> LoadPlanDocument(const std::string& path);

// Reads the single-stage plan at `path` for `run`. Errors name every field that differs from
// the run, and a document without a mesh or strategies.
Result<SavedPlan> ReadSavedPlan(const std::string& path, const RunIdentity& run);

// The stages of the pipelined plan at `path` (nullopt for a single-stage plan), checked to be
// for `run`; errors as ReadSavedPlan's, and a stage that does not parse (ParseSavedPlanStages).
Result<std::optional<ManualStages>> ReadSavedPipelinedStages(const std::string& path,
                                                             const RunIdentity& run);

// The same for a document already read (`source` names it in errors), as the API takes one
// (api::PipelinePlanRequest::saved); a single-stage plan has no stages to pipeline: an error.
Result<ManualStages> PipelinedStagesOf(const Json& plan, const std::string& source,
                                       const RunIdentity& run);

}  // namespace alpa::plan::document

#endif  // ALPA_PLAN_PLAN_DOCUMENT_H_
