// `alpa run STEP.hlo [--cluster SPEC --method data|zero2|zero3|shard] [--check]`: trains a whole
// train step dumped by PyTorch/XLA or JAX (forward, backward and update in one module; its
// parameter roles from api::DescribeDumpedTrainStep, its starting values from
// api::InitialDumpedStepValues, its scalars from --scalar NAME=VALUE, its batches synthetic or
// from --batch-file). Each step's results replace the parameters input_output_alias names.
// Without --cluster it runs in the reference interpreter; with it, planned and partitioned on
// that many in-process devices, and --check runs each step again in the interpreter from the
// devices' inputs and compares every result: a value passes when
//   max_i |got_i - want_i| <= kRelativeTolerance * max(1e-3, max_i |want_i|)   (training_check.h)
// (max(1, |want|) for the loss), else the run fails with exit 3.
#ifndef ALPA_TOOLS_ALPA_DUMPED_STEP_RUN_H_
#define ALPA_TOOLS_ALPA_DUMPED_STEP_RUN_H_

#include <string>
#include <vector>

#include "tools/alpa/run_command.h"

namespace alpa::tools {

// Returns the process exit code (command_util.h).
int RunDumpedStep(const RunOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_DUMPED_STEP_RUN_H_
