// A single-stage plan's document and text: what `alpa plan` prints and writes (`--json`, `-o`)
// for a plan on one mesh, and what the Python package's Executable.plan holds. The document,
// version 1 (the pipelined version 2 extends its header: plan/pipeshard_document.h):
//
//   {"format": "alpa-plan", "version": 1, "model": {"name", "fingerprint"}, "cluster",
//    "method", "mesh", "batch_axis", "num_micro_batches", "pins" (instructions pinned),
//    "estimate": {"step_time_s", "compute_s", "communication_s", "resharding_s", "tflops",
//                 "peak_memory_bytes", "peak" (plan/memory_summary.h's PeakJson),
//                 "memory_budget_bytes",
//                 "comm": {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
//                          "collective-permute", "send-recv", "bytes"}},
//    "compile": {"total_s", "solver_s", "strategies_s", "cost_graph_s", "estimate_s",
//                "solver_status", "ilp_nodes", "ilp_edges", "meshes_tried"},
//    "shardings": {"<instruction>": "<XLA sharding text>", ...},
//    "strategies": {"<instruction>": "<strategy name>", ...}}
#ifndef ALPA_API_SINGLE_STAGE_DOCUMENT_H_
#define ALPA_API_SINGLE_STAGE_DOCUMENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/parallelize.h"
#include "sharding/auto_sharding.h"
#include "support/status.h"

namespace alpa::api {

// What the document records beside the solution: the run's names, the step's dot/convolution
// FLOPs (Alpa's TFLOPS count), where the peak memory is, and the planning's figures.
struct SingleStageReport {
  std::string model_name;
  std::string fingerprint;  // of the step's module
  std::string cluster;      // as the user wrote it
  std::string method;
  int64_t batch_axis = -1;
  int64_t num_micro_batches = 1;
  double dot_flops = 0;
  double total_seconds = 0;
  int64_t meshes_tried = 0;
  int64_t pins = 0;             // instructions pinned
  nlohmann::ordered_json peak;  // plan::PeakJson of the plan's memory model
};

// The report's fields every caller fills the same way: the step's fingerprint, its FLOPs and
// where `solution`'s peak is. The caller adds the names, the method and the planning's figures.
// Errors: FLOPs that cannot be counted (an instruction the counter does not know).
Result<SingleStageReport> ReportOfSingleStagePlan(const TrainStep& step,
                                                  const sharding::ShardingSolution& solution,
                                                  int64_t num_micro_batches);

// The document (above) of `solution` on the logical mesh `shape`.
nlohmann::ordered_json SingleStagePlanJson(const SingleStageReport& report,
                                           const std::vector<int64_t>& shape,
                                           const sharding::ShardingSolution& solution);

// The plan as `alpa plan` prints it: mesh, step time and its parts, TFLOPS, peak memory and
// where, collectives, compile figures, every parameter's sharding and the largest values'.
std::string SingleStagePlanText(const SingleStageReport& report, const std::vector<int64_t>& shape,
                                const sharding::ShardingSolution& solution);

}  // namespace alpa::api

#endif  // ALPA_API_SINGLE_STAGE_DOCUMENT_H_
