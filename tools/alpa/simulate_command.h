// `alpa simulate`: one training step of a pipeline through the event-driven simulator
// (src/pipeline/simulator.h): step time, bubble fraction, critical path, Alpa's closed-formula
// estimate next to the simulation, per-device busy time and peak memory; --trace writes a Chrome
// trace, --svg a Gantt chart.
//
// The pipeline comes from flags for the common case
//   alpa simulate --stages 1:2,1:2 --micro-batches 4 --schedule gpipe [--transfer 0.5]
// or from a pipeline file (--spec FILE.json, format in src/pipeline/spec_json.h; examples in
// examples/pipelines/).
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

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_SIMULATE_COMMAND_H_
