// `alpa simulate`: one training step of a pipeline through the event-driven simulator
// (src/pipeline/simulator.h): step time, bubble fraction, critical path, Alpa's closed-formula
// estimate next to the simulation, per-device busy time and peak memory; --trace writes a Chrome
// trace, --svg a Gantt chart.
//
// The pipeline comes from flags for the common case
//   alpa simulate --stages 1:2,1:2 --micro-batches 4 --schedule gpipe [--transfer 0.5]
// or from a pipeline file (--spec FILE.json):
//
//   {
//     "stages": [                                virtual stages in model order (required)
//       {"forward_s": 1.0, "backward_s": 2.0,    seconds per micro-batch (required)
//        "static_bytes": 1073741824,             optional (0): weights, grads, optimizer state
//        "activation_bytes": 268435456,          optional (0): saved per micro-batch in flight
//        "forward_per_micro_batch_s": [...],     optional: one time per micro-batch, replacing
//        "backward_per_micro_batch_s": [...]}    forward_s / backward_s
//     ],
//     "micro_batches": 4,                        required, >= 1
//     "schedule": "1f1b",                        optional: gpipe, 1f1b (default), interleaved-1f1b
//     "chunks": 1,                               optional (1): model chunks per device
//     "forward_transfer_s": 0.5,                 optional (0): one number for every boundary or a
//     "backward_transfer_s": [0.5, 0.25]         list with one entry per boundary (stages - 1)
//   }
//
// With chunks v the stages list has S·v entries and virtual stage j runs on device j % S.
// Unknown keys are errors; every error names the JSON path ("stages[1].backward_s").
// examples/pipelines/ has an example.
#ifndef ALPA_TOOLS_ALPA_SIMULATE_COMMAND_H_
#define ALPA_TOOLS_ALPA_SIMULATE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "pipeline/simulator.h"
#include "support/status.h"

namespace alpa::tools {

struct SimulateOptions {
  std::string stages;  // "F:B,F:B,..."
  int micro_batches = 1;
  std::string schedule = "1f1b";
  int chunks = 1;
  std::string transfer;          // seconds, same both ways on every boundary
  std::string activation_bytes;  // one value, or one per stage
  std::string static_bytes;
  std::string spec;  // a pipeline file; excludes the flags above
  bool json = false;
  std::string trace;  // Chrome trace output
  std::string svg;    // SVG Gantt output
};

CLI::App* AddSimulateCommand(CLI::App& app, SimulateOptions& options);

// Returns the process exit code (command_util.h).
int RunSimulate(const SimulateOptions& options);

// The pipeline the flags describe; errors name the flag.
Result<pipeline::PipelineSpec> PipelineSpecFromFlags(const SimulateOptions& options);

// Parses a pipeline file (format above). Errors start with `source` and name the JSON path.
Result<pipeline::PipelineSpec> ParsePipelineJson(std::string_view text, const std::string& source);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_SIMULATE_COMMAND_H_
