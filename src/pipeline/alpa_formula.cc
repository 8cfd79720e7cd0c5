#include "pipeline/alpa_formula.h"

#include <algorithm>

namespace alpa::pipeline {

double AlpaPipelineLatency(const std::vector<double>& stage_times, int num_micro_batches) {
  if (stage_times.empty()) return 0;
  double sum = 0;
  double max = 0;
  for (double t : stage_times) {
    sum += t;
    max = std::max(max, t);
  }
  return sum + (num_micro_batches - 1) * max;
}

}  // namespace alpa::pipeline
