// `alpa plan`: a single-stage plan of one training step on a cluster (intra-operator
// auto-sharding, src/sharding/auto_sharding.h).
//
//   alpa plan MODEL --cluster SPEC [--method auto|shard|data|zero2|zero3|pipeshard|uniform]
//             [--mesh 2x4] [--shardings FILE.json] [--ignore-hlo-shardings] [--json]
//             [-o plan.json]
//
// --method auto (the default) lets the planner choose between one stage and several: a zoo model
// goes to the pipeline planner (pipeshard_plan.h), whose candidates include one stage on every
// device with each of its logical meshes; an HLO file (no layers to cut into stages), or a
// single-stage flag (--mesh, --batch-axis, --shardings, --dump-problem), to
// --method shard. --method shard plans on --mesh; without it every logical shape of the cluster's
// devices is tried ((N), and (a, N/a) for every divisor a) and the fastest plan is kept. data,
// zero2 and zero3 run on the 1-D mesh of all N devices (--mesh, if given, must be N) and pin the
// layouts sharding/parallel_methods.h describes. They need the role of every entry parameter
// (weight, optimizer state, batch), which a zoo model's train step gives
// (autodiff::StepParameterLayout; parameter i before the batch is replaced by element i + 1 of
// the step's result). An HLO file carries no roles, so for it these methods are an error that
// says to use a zoo model, or --method shard with the batch pinned in a --shardings file.
//
// Pins (sharding/pins.h), in precedence order: --shardings FILE.json ({"<instruction>": "<XLA
// sharding text>"}, device ids = mesh positions in row-major order), the `sharding=` attributes
// of an HLO file (unless --ignore-hlo-shardings), the method's rules. The solver must respect
// them; a pin no strategy of its instruction can take is an error naming it.
//
// The human output gives the chosen mesh, the estimated step time, TFLOPS, per-device peak
// memory, collectives by kind and the sharding of every parameter and of the largest
// activations; --json prints the plan document (version 1, src/api/single_stage_document.h),
// which -o also writes. The pipeline planner extends the same document with stages.
#ifndef ALPA_TOOLS_ALPA_PLAN_COMMAND_H_
#define ALPA_TOOLS_ALPA_PLAN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct PlanOptions {
  std::string model_path;
  std::string cluster;
  std::string profile_path;  // --profile: measured figures in place of the analytic ones
  std::string method = "auto";
  std::string mesh;  // "2x4"; empty: try every logical shape (shard), N (the others)
  std::string shardings_path;
  bool ignore_hlo_shardings = false;
  std::optional<int64_t> memory_budget;  // bytes per device, every method
  double time_limit_s = 30;
  std::string solver = "auto";
  bool prefer_reduce_scatter = true;
  bool replicate_unknown_ops = false;
  // Mesh axis every value's batch dimension is split over (sharding/batch_dims.h); absent: 0 for
  // data/zero2/zero3, free for shard.
  std::optional<int64_t> batch_axis;
  std::string problem_path;  // --dump-problem: the chosen mesh's solver problem (IOPDDL JSON)
  // pipeshard only (tools/alpa/pipeshard_plan.h).
  std::string schedule = "auto";  // 1f1b, gpipe, or auto: both, keep the faster
  std::string logical_space = "single-node";
  std::string submesh_space = "power-of-two";
  double imbalance_tolerance = -1;  // < 0: none
  std::string manual_stages_path;   // --manual-stages: evaluate these stages (plan/manual_stages.h)
  std::string validate_path;        // --validate: re-cost this saved plan
  std::string report_path;          // --report: the plan as an HTML page
  bool search_micro_batches = false;  // try micro-batch counts too, keep the fastest
  // uniform only: Megatron's (dp, op, pp); all absent: every grid point, the best kept.
  std::optional<int64_t> dp, op, pp;
  bool json = false;
  std::string output_path;
  ZooFlags zoo;
};

CLI::App* AddPlanCommand(CLI::App& app, PlanOptions& options);

// Returns the process exit code (command_util.h).
int RunPlan(const PlanOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PLAN_COMMAND_H_
