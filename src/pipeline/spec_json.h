// Pipeline files: a PipelineSpec (simulator.h) as JSON, what `alpa simulate --spec` reads.
//
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
#ifndef ALPA_PIPELINE_SPEC_JSON_H_
#define ALPA_PIPELINE_SPEC_JSON_H_

#include <string>
#include <string_view>

#include "pipeline/simulator.h"
#include "support/status.h"

namespace alpa::pipeline {

// Parses a pipeline file. Errors start with `source` and name the JSON path.
Result<PipelineSpec> ParsePipelineJson(std::string_view text, const std::string& source);

// The checks that go with the chunks and the schedule: chunks divide the stages, chunks > 1 only
// under interleaved-1f1b, whose micro-batches are a multiple of the devices. The messages start
// with the names the caller gives (a flag, or a JSON key).
Status CheckPipelineLayout(const PipelineSpec& spec, const std::string& chunks_name,
                           const std::string& micro_batches_name);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_SPEC_JSON_H_
