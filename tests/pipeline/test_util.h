// Shared helpers of the pipeline tests.
#ifndef ALPA_TESTS_PIPELINE_TEST_UTIL_H_
#define ALPA_TESTS_PIPELINE_TEST_UTIL_H_

#include <utility>
#include <vector>

#include "pipeline/simulator.h"

namespace alpa::pipeline::testing {

// Stages with the given (forward, backward) times, no transfers.
inline PipelineSpec MakeSpec(const std::vector<std::pair<double, double>>& forward_backward,
                             int num_micro_batches, ScheduleKind schedule) {
  PipelineSpec spec;
  spec.num_micro_batches = num_micro_batches;
  spec.schedule = schedule;
  for (const auto& [forward, backward] : forward_backward) {
    StageSpec stage;
    stage.forward_s = forward;
    stage.backward_s = backward;
    spec.stages.push_back(stage);
  }
  return spec;
}

// `num_stages` equal stages with forward 1 and backward 2.
inline PipelineSpec UniformSpec(int num_stages, int num_micro_batches, ScheduleKind schedule) {
  return MakeSpec(std::vector<std::pair<double, double>>(num_stages, {1.0, 2.0}), num_micro_batches,
                  schedule);
}

// Stage totals f + b, the t_i of Alpa's formula.
inline std::vector<double> StageTimes(const PipelineSpec& spec) {
  std::vector<double> times;
  for (const StageSpec& stage : spec.stages) times.push_back(stage.forward_s + stage.backward_s);
  return times;
}

}  // namespace alpa::pipeline::testing

#endif  // ALPA_TESTS_PIPELINE_TEST_UTIL_H_
