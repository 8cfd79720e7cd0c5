// `alpa run MODEL --cluster SPEC --method pipeshard [--schedule S] [--micro-batches M]
// [--manual-stages FILE | --plan plan.json] [--check] [--trace FILE] [--json]`: plans the zoo
// model's pipeline (plan/pipeline_search.h: stages on sub-meshes, intra-op sharding inside each)
// or takes the given stages, and trains it on in-process devices or, with --backend mpi, one MPI
// rank per device (api/pipeshard_executable.h), printing the stages, each step's loss, time and
// measured peak memory, and beside the simulator's figures: the measured step time, each stage's
// measured peak against its predicted one, the bubble fraction and the bytes moved between
// stages. --check trains the reference
// interpreter alongside (training_check.h); --trace writes every device's forward, backward,
// update, sends and receives per micro-batch as a Chrome trace, to set beside
// `alpa simulate --trace` of the same plan.
#ifndef ALPA_TOOLS_ALPA_PIPESHARD_RUN_H_
#define ALPA_TOOLS_ALPA_PIPESHARD_RUN_H_

#include <cstdint>
#include <optional>

#include "plan/manual_stages.h"
#include "tools/alpa/cluster_run.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

// Returns the process exit code (command_util.h). `saved` are a saved plan's stages (--plan).
int RunPipeshardOnCluster(const ZooStep& zoo, const ZooStep* f32_step,
                          const ClusterRunOptions& options,
                          const std::optional<plan::ManualStages>& saved, const TrainingRun& run);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PIPESHARD_RUN_H_
