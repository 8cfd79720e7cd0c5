// Alpa's closed-form pipeline latency (Alpa OSDI'22, Eq. 2), used by its stage-construction
// DP:
//
//   T = sum_i t_i + (B - 1) · max_j t_j
//
// with t_i the forward + backward time of one micro-batch on stage i and B micro-batches; it has
// no transfer term. It is the exact makespan of a forward-only flow line (each micro-batch visits
// stages 0 .. S-1 in order, every stage runs micro-batches in order). For forward + backward
// pipelines the simulator (simulator.h) finds (tests/pipeline/simulator_test.cc):
//   - exact for equal stages and zero transfers, for any B (also B < S), GPipe and 1F1B:
//     (S + B - 1)·(f + b), e.g. 2x4 and 4x2 with f = 1, b = 2 both give 15;
//   - too high for 1F1B with unequal stages and B < S: 4 stages (2,4),(1,2),(1,2),(1,2), B = 2:
//     formula 21, 1F1B 19 (GPipe 21); 3 stages (1,2),(2,4),(1,2), B = 2: 18 vs 1F1B 16;
//   - too low for GPipe when forward and backward are skewed across stages: (1,3),(3,1), B = 4:
//     formula 20, GPipe 26 (1F1B 20);
//   - too low with transfers (it has none): 2x4, f = 1, b = 2, 0.5 s each way: formula 15,
//     GPipe 16, 1F1B 17.
#ifndef ALPA_PIPELINE_ALPA_FORMULA_H_
#define ALPA_PIPELINE_ALPA_FORMULA_H_

#include <vector>

namespace alpa::pipeline {

// sum(stage_times) + (num_micro_batches - 1) · max(stage_times); 0 for no stages.
double AlpaPipelineLatency(const std::vector<double>& stage_times, int num_micro_batches);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_ALPA_FORMULA_H_
