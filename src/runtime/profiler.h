// The profiler: measures what one device of this machine can do (matmul and convolution FLOP/s
// per dtype, elementwise memory bandwidth) and what the devices of `local:N` exchange (all-reduce,
// all-gather, reduce-scatter and all-to-all over all N devices through the in-process
// communicator: collective_profiler.h), so the cost model can use measured figures in place of
// the analytic estimates of cluster::CpuCoreEstimate. The database it writes is in
// profile_database.h.
//
// What a device is. For `local:N` a device is one N-th of this machine: cores / N OpenMP threads
// (at least 1), the share kernels/matmul.h's threading contract gives each of N kernels running at
// once. The profiler measures one such device alone, with its kernels limited to that many threads
// (omp_set_num_threads); it does not run N copies concurrently, so shared-resource contention
// (memory bandwidth, the last-level cache) between devices is not in the figures. Collectives do
// run on all N devices at once (one thread each), as the runtime runs them.
//
// Where its buffers sit. A memory-bound figure's buffers are mapped in several placements, each
// run on the next (ProfileOptions::placements, placed_buffers.h): on the project's machines such
// a kernel's speed depends on where the pages of its buffers landed, fixed for an allocation's
// life.
//
// How a figure is measured. A sampler yields the seconds one operation took in one timed run. The
// real sampler (MakeTimedSampler) first warms up (the first call JIT-compiles the oneDNN primitive
// and faults the buffers in), then calibrates: a run repeats the operation as many times as it
// takes to last at least `min_run_seconds`, so fast kernels are not timed at the clock's
// resolution; it reports elapsed / iterations, timed with std::chrono::steady_clock. Collectives
// use the same calibration over a timer of back-to-back calls (MakeBatchSampler).
//
// Rounds (MeasureFigures). The figures are measured together: every sampler is prepared first,
// then each round takes one run of every figure, so a figure's runs are spread over the whole
// profile instead of bunched into a fraction of a second. A shared machine drifts: on the
// project's 2-core machines, a block of figures measured back to back came out 13 to 38% slower
// than in the next profile, each with a spread under 5% (docs/cost-model.md). Bunched runs
// measure the machine of that second; runs in rounds measure it over the profile, and their median
// passes over a slow spell shorter than half of it. All buffers are alive at once (a peak resident
// size of 5.7 GB with the default shapes and 4 placements on 2 devices, 1.8 GB with one).
//
// What is recorded. A figure's time is the median of its runs; with them come
//     spread      = (p90 - p10) / median   how much the machine varied over the profile
//                   (percentiles with linear interpolation between order statistics)
//     uncertainty = how far the true median may lie from the measured one, relative to it: the
//                   larger side of the median's 95% confidence interval (MedianUncertainty)
// Runs in rounds include the machine's drift, so their spread is wide on a shared machine (10 to
// 25% on the project's) even when the median is well determined; the uncertainty is what says
// whether it is. A figure whose uncertainty is above `max_uncertainty` after the first `repeats`
// rounds gets `repeats` more, in rounds among such figures only, up to `max_retries` times; if it
// is still too uncertain it is kept but flagged. A flagged figure is recorded (so the reader sees
// it) but never used in the derived figures.
#ifndef ALPA_RUNTIME_PROFILER_H_
#define ALPA_RUNTIME_PROFILER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/status.h"

namespace alpa::runtime {

// One figure of the profile.
struct Measurement {
  // "matmul", "convolution", "elementwise", "kernel-launch" (kernel_launch.h), or a collective:
  // "all-reduce", "all-gather", "reduce-scatter", "all-to-all"
  std::string kind;
  std::string name;   // e.g. "matmul f32 1024^3", unique within a profile
  std::string dtype;  // "f32", "f16", "bf16", "f64"
  // matmul: {batch, m, k, n}; convolution: {N, C_in, H, W, C_out, KH, KW} (stride 1, same
  // padding); elementwise: {elements} of c = a + b; kernel-launch: {kernels in the chain,
  // elements of each}; collective: {devices, elements} (f32).
  std::vector<int64_t> shape;
  // Work of one operation: FLOPs (matmul: 2*b*m*k*n, convolution: 2*N*C_out*H*W*C_in*KH*KW) or,
  // for elementwise, bytes moved (3 * elements * element size: two reads and one write); for
  // kernel-launch, 1 kernel (the operation is one instruction of the chain); for a
  // collective, its size as collective_cost.h prices it (4 * elements), so the throughput is the
  // algorithm bandwidth.
  double work = 0;
  std::string unit;                // "FLOP", "B" or "kernel"
  double median_s = 0;             // seconds per operation, median of the runs
  double spread = 0;               // (p90 - p10) / median of the runs
  double uncertainty = 0;          // MedianUncertainty of the runs
  std::vector<double> runs;        // seconds per operation of each run, one per round, in order
  int64_t iterations_per_run = 1;  // operations per timed run (calibrated)
  int64_t retries = 0;             // passes of more rounds made because it was too uncertain
  bool flagged = false;            // still too uncertain after max_retries passes: not used

  // work / median_s: FLOP/s or B/s.
  double Throughput() const { return median_s > 0 ? work / median_s : 0; }
  friend bool operator==(const Measurement&, const Measurement&) = default;
};

// The statistics the measurement loop keeps (exposed for tests).
double Median(std::vector<double> values);
// The q-quantile (0 <= q <= 1) with linear interpolation between order statistics.
double Quantile(std::vector<double> values, double q);
// (p90 - p10) / median; 0 for fewer than two values or a zero median.
double RelativeSpread(const std::vector<double>& values);
// How far the true median of the distribution the values were drawn from may lie from their
// median, relative to it: max(median - x(l), x(n+1-l) - median) / median, where [x(l), x(n+1-l)]
// (the values sorted, 1-based) is the distribution-free 95% confidence interval of the median: l
// is the largest rank with P(Binomial(n, 1/2) < l) <= 2.5%, since each value falls below the true
// median with probability 1/2. With fewer than 6 values no rank qualifies and the interval is
// [min, max], which covers less (75% for 3 values). 0 for fewer than two values or a zero median.
double MedianUncertainty(std::vector<double> values);

// Yields the seconds per operation of one timed run (or an error from the kernel).
using Sampler = std::function<Result<double>()>;

struct MeasureSettings {
  int64_t repeats = 9;            // rounds per pass: timed runs of each figure (at least 2)
  double max_uncertainty = 0.05;  // a figure whose median is less certain gets another pass
  int64_t max_retries = 2;        // further passes before such a figure is flagged

  friend bool operator==(const MeasureSettings&, const MeasureSettings&) = default;
};

// Measures figures[i] with samplers[i], in rounds with re-measurement (the header comment), and
// fills each figure's median_s, spread, runs, retries and flagged (the rest is left as given).
// `progress` (may be null) gets a line per round. A sampler's error is returned, naming its figure.
Status MeasureFigures(const std::vector<Sampler>& samplers, const MeasureSettings& settings,
                      std::vector<Measurement>& figures,
                      const std::function<void(const std::string&)>& progress);

// Seconds that `count` operations back to back took (or an error from one of them).
using BatchTimer = std::function<Result<double>(int64_t count)>;

// The sampler over `timer`: warms up with one operation, calibrates the operations per run so that
// a run lasts at least `min_run_seconds`, then each call times one run and returns seconds per
// operation. `iterations_per_run` (may be null) receives the calibrated count.
Result<Sampler> MakeBatchSampler(BatchTimer timer, double min_run_seconds,
                                 int64_t* iterations_per_run);

// The real sampler around `operation` (one kernel call): warms up, calibrates iterations per run
// so that a run lasts at least `min_run_seconds`, then each call times one run with steady_clock.
// `iterations_per_run` (may be null) receives the calibrated count. Errors of the warm-up call are
// returned.
Result<Sampler> MakeTimedSampler(std::function<Status()> operation, double min_run_seconds,
                                 int64_t* iterations_per_run);

struct ProfileOptions {
  std::string cluster_name = "local";  // recorded in the database
  int64_t devices = 1;                 // devices sharing this machine (local:N -> N)
  MeasureSettings measure;
  double min_run_seconds = 0.05;  // the shortest timed run (MakeTimedSampler)
  // Placements in physical memory (placed_buffers.h) the buffers of each memory-bound figure
  // (elementwise, collectives) are mapped in, each run on the next: what such a figure measures
  // depends on where its pages landed, so its median is over this many placements, not one
  // (`alpa profile --placements`; 1: one, as profiles before it). Each multiplies those figures'
  // memory (4: about 4 GB more with the default sizes on 2 devices).
  int64_t placements = 4;
  std::vector<std::string> dtypes = {"f32", "f16", "bf16", "f64"};
  // Square matmuls n x n x n per dtype, plus the skinny ones {batch, m, k, n}.
  std::vector<int64_t> matmul_sizes = {256, 512, 1024, 2048};
  std::vector<std::vector<int64_t>> skinny_matmuls = {{1, 8192, 1024, 64}};
  // Convolutions {N, C_in, H, W, C_out, KH, KW}, stride 1, same padding, in the dtypes above that
  // take oneDNN (f32, f16, bf16; f64 runs the reference loop and is skipped).
  std::vector<std::vector<int64_t>> convolutions = {{8, 64, 56, 56, 64, 3, 3},
                                                    {8, 256, 14, 14, 256, 3, 3}};
  // Elementwise c = a + b in f32, by the bytes of one array.
  std::vector<int64_t> elementwise_bytes = {int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20,
                                            int64_t{256} << 20};
  // Each collective over all devices in f32, by its size (collective_profiler.h); measured only
  // when there are at least 2 devices.
  std::vector<int64_t> collective_bytes = {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20,
                                           int64_t{16} << 20, int64_t{64} << 20};
  // Called with a line as the samplers are prepared and after each round ("round 3/7 of 50
  // figure(s): 21 s in all, about 28 s to go"); null for quiet.
  std::function<void(const std::string&)> progress;
};

// The small, fast settings tests and `alpa profile --quick` use: small shapes, 3 repeats, short
// runs; well under a few seconds in all.
ProfileOptions QuickProfileOptions();

// Threads one device gets: as many as its cores in the runtime (DeviceCores), at least 1.
int64_t ThreadsPerDevice(int64_t devices);

struct ProfileDatabase;

// Measures every figure of `options` on this machine and returns the database (derived figures
// filled in). Restores the OpenMP thread count it found.
Result<ProfileDatabase> RunProfile(const ProfileOptions& options);

// "75.1 GFLOP/s" or "12.3 GB/s": a measurement's throughput with its unit; "1.20 us a kernel"
// for the kernel launch.
std::string FormatThroughput(const Measurement& measurement);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PROFILER_H_
