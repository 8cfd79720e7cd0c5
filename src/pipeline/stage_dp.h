// Alpa's inter-operator stage construction (Alpa OSDI'22, Section 5.2, Algorithm 1): cut L forward
// layers into contiguous stages and give each a sub-mesh and a logical configuration so that all
// D devices are used and the pipeline latency (alpa_formula.h, paper Eq. 2)
//
//   T = sum_i t_i + (B - 1) · max_j t_j
//
// is smallest. Plain data in and out: the caller profiles or estimates every candidate stage into
// a StageCostTable and later slices the cluster (submesh_slicing.h).
//
// Alpa enumerates a bound t_max on the stage time; for each it solves, by dynamic programming over
// (stages s, first layer l, devices d), the smallest sum of stage times with every stage <= t_max
// (paper Eq. 3-4):
//
//   F(0, L, 0) = 0
//   F(s, l, d) = min over l <= i < L, sub-mesh m with n_m <= d, config c such that
//                t(l, i, m, c) <= t_max and s - 1 <= max_successors(l, i, m, c) of
//                F(s - 1, i + 1, d - n_m) + t(l, i, m, c)
//   T(t_max)   = min over s of F(s, 0, D) + (B - 1) · (largest stage time of that plan)
//
// and keeps the best T. On a heterogeneous cluster the devices come in pools (host types): each
// sub-mesh draws from one pool, d is a vector of devices left per pool, and a plan uses every
// device of every pool. SolveStageDp finds the same optimum (exactly with epsilon_s = 0) but
// solves a few dozen bounds where Alpa's loop solves thousands: the smallest sum is a staircase in
// t_max, and after each answer it goes straight to the largest stage time below that answer's
// largest stage (stage_dp.cc says why nothing in between can win).
#ifndef ALPA_PIPELINE_STAGE_DP_H_
#define ALPA_PIPELINE_STAGE_DP_H_

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace alpa::pipeline {

// Cost of every candidate stage: forward layers first..last (and their backward) on sub-mesh
// choice s (of submesh_devices.size(), each with that many devices) in logical configuration c (of
// num_configs). time_s = forward + backward of ONE micro-batch; +infinity = not a candidate.
// max_successors = how many stages may follow the stage on its memory (Alpa's
// max_n_succ_stages, paper Eq. 5): allowed as stage k of S (0-based) only when
// S - 1 - k <= max_successors; -1 = never fits.
struct StageCostTable {
  int64_t num_layers = 0;
  std::vector<int64_t> submesh_devices;
  int64_t num_configs = 0;
  std::vector<double> time_s;  // [first][last][submesh][config] row-major; last < first unused
  std::vector<int64_t> max_successors;  // same indexing
  // Per sub-mesh choice, the device pool it draws from (StageDpOptions::devices_per_pool); empty
  // when there is one pool.
  std::vector<int64_t> submesh_pools;

  // Sized for the given shape with every stage a non-candidate (time +inf, max_successors -1).
  static StageCostTable Make(int64_t num_layers, std::vector<int64_t> submesh_devices,
                             int64_t num_configs);
  size_t Index(int64_t first, int64_t last, int64_t submesh, int64_t config) const {
    return static_cast<size_t>(
        ((first * num_layers + last) * static_cast<int64_t>(submesh_devices.size()) + submesh) *
            num_configs +
        config);
  }
};

struct DpStage {
  int64_t first_layer = 0;
  int64_t last_layer = 0;  // inclusive
  int64_t submesh = 0;
  int64_t config = 0;
  double time_s = 0;
};

struct StagePlanCandidate {
  std::vector<DpStage> stages;  // in pipeline order, covering layers 0 .. L-1
  double latency_s = 0;         // sum t + (B - 1) · max t
};

struct StageDpOptions {
  int64_t num_devices = 1;  // D: the stages' sub-meshes use exactly this many
  // The devices of each pool (summing to D), each used exactly; empty: one pool of D devices.
  std::vector<int64_t> devices_per_pool = {};
  int num_micro_batches = 1;
  // A bound closer than this to one already solved is skipped (Alpa's gap; it reports the same
  // plans as 0). The answer is then within (B - 1) · epsilon_s of the optimum; 0 = exact.
  double epsilon_s = 1e-6;
  int64_t max_candidates = 8;
};

struct StageDpResult {
  // The plans the bounds solved found (per bound, the best for each stage count the DP tells
  // apart: a superset of Alpa's best plan per bound), distinct, best first (latency, then fewer
  // stages, then the stage lists compared lexicographically); at most max_candidates. Empty when
  // no plan uses all devices within the memory limits.
  std::vector<StagePlanCandidate> candidates;
  int64_t t_max_values_tried = 0;  // dynamic programs solved
};

// Errors (INVALID_ARGUMENT) name the field: num_layers, submesh_devices or num_configs < 1, vector
// sizes that do not match them, NaN or negative times, max_successors < -1, num_devices,
// num_micro_batches or max_candidates < 1, epsilon_s negative or not finite, pools that do not
// sum to num_devices or that a sub-mesh names but the options do not have.
Result<StageDpResult> SolveStageDp(const StageCostTable& table, const StageDpOptions& options);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_STAGE_DP_H_
