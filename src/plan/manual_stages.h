// Manual stages (Alpa's ManualStageOption and its benchmark suites' pre-found solutions):
//
//   {"layers": 8, "num_micro_batches": 128, "schedule": "1f1b",
//    "stages": [{"layers": [0, 1], "submesh": [1, 2], "logical_mesh": [2, 1],
//                "force_batch_dim_to_mesh_dim": 0}, ...]}
//
// "layers" is how many layers the stages' layer ids count. The model's own layers (its markers:
// pipeline/stage_slicing.h) are grouped into that many contiguous groups balancing their FLOPs
// (pipeline/layer_clustering.h, Alpa's layer construction over whole model layers), so Alpa's
// solutions for 16 "auto layers" of gpt-39b's 50 model layers apply. "num_micro_batches",
// "schedule" and "num_chunks" are optional (the command's --micro-batches, 1f1b, 1; with
// "interleaved-1f1b" and num_chunks v, stage j runs on the devices of stage j % (stages / v)). A
// sub-mesh inside one host may have any width, not only the planner's powers of two (stages of 1
// and 3 devices: cluster::SubHostSubmeshes). A stage's logical mesh (a, 1) is the 1-D mesh [a];
// "force_batch_dim_to_mesh_dim" may be 0 or absent; "device_type" (optional) names the type of the
// stage's devices on a heterogeneous cluster (ignored on a homogeneous one, so that a plan re-costs
// on other devices); intra-op sharding inside each stage stays automatic.
#ifndef ALPA_PLAN_MANUAL_STAGES_H_
#define ALPA_PLAN_MANUAL_STAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/schedule.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "support/status.h"

namespace alpa::plan {

struct ManualStage {
  std::vector<int64_t> layers;
  std::vector<int64_t> submesh;
  std::vector<int64_t> logical_mesh;
  bool force_batch = false;
  std::string device_type;  // empty: any
};

struct ManualStages {
  int64_t num_layers = 0;
  std::optional<int64_t> num_micro_batches;
  std::optional<pipeline::ScheduleKind> schedule;
  int64_t num_chunks = 1;  // per device, under interleaved 1F1B (pipeshard_planner.h)
  std::vector<ManualStage> stages;
};

// Errors name `source` (the file) and the field: "stages[2].submesh: ...".
Result<ManualStages> ParseManualStages(const std::string& text, const std::string& source);

// The stages of a saved pipelined plan (the plan document, version 2, that `alpa plan -o`
// writes: "num_layers" model layers, stages with "layers": [first, last]) as manual stages over
// the model's own layers, to re-cost it (`alpa plan --validate`). Errors name `source`.
Result<ManualStages> ParseSavedPlanStages(const std::string& text, const std::string& source);

// The stages as choices over `table`'s layers and configurations. Errors: layer ids that are not
// contiguous or do not cover 0..layers-1 exactly once (naming what is missing or overlaps), more
// groups than model layers, a sub-mesh and logical mesh the table has no configuration for.
Result<std::vector<StageChoice>> ResolveManualStages(const ManualStages& manual,
                                                     const LayerCostTable& table);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_MANUAL_STAGES_H_
