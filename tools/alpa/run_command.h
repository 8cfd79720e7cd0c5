// `alpa run MODEL [--steps N] [--seed S] [--json] [zoo overrides]`: trains a zoo model for N steps
// on one device (the reference interpreter) on synthetic data with a learnable pattern, printing
// the loss of each step as it goes. With --cluster SPEC it plans, partitions and trains the model
// on the cluster's devices in-process (cluster_run.h). An HLO file of a whole train step runs as
// dumped_step_run.h says.
#ifndef ALPA_TOOLS_ALPA_RUN_COMMAND_H_
#define ALPA_TOOLS_ALPA_RUN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/alpa/cluster_run.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct RunOptions {
  std::string model;  // a zoo name, an imported model, or a dumped train step (dumped_step_run.h)
  int64_t steps = 10;
  uint64_t seed = 0;
  bool json = false;
  ClusterRunOptions cluster;
  CheckpointFlags checkpoints;
  // --elastic: supervise the run and relaunch it on the devices left (elastic_run.h), with
  // `arguments` (the command line after the program's name) as each launch's.
  bool elastic = false;
  std::vector<std::string> arguments;
  std::string progress_file;  // --progress-file, hidden: what a supervised run reports
  ZooFlags zoo;
  std::vector<std::string> scalars;  // --scalar NAME=VALUE of a dumped train step
};

CLI::App* AddRunCommand(CLI::App& app, RunOptions& options);

// Returns the process exit code (command_util.h).
int RunRun(const RunOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_RUN_COMMAND_H_
