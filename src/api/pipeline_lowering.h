// Compiles a pipelined plan's stage programs and schedule into every device's static list of
// pipeline instructions (runtime/pipeline_executor.h): slots for each stage's state and each
// micro-batch's inputs and outputs, the values crossing between stages as tagged sends and
// receives of tile pieces (spmd/cross_mesh.h), runs in the schedule's order, the gradients'
// sums and the update. Internal to pipeshard_executable.cc.
#ifndef ALPA_API_PIPELINE_LOWERING_H_
#define ALPA_API_PIPELINE_LOWERING_H_

#include "api/pipeshard_executable.h"
#include "support/status.h"

namespace alpa::api {

// Fills exe's devices_, slots_of_ and cross_mesh_bytes_ from its stages_ and schedule_.
Status LowerPipeline(PipeshardExecutable& exe);

}  // namespace alpa::api

#endif  // ALPA_API_PIPELINE_LOWERING_H_
