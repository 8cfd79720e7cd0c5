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
// How a figure is measured (MeasureFigure). A sampler yields the seconds one operation took in one
// timed run. The real sampler (MakeTimedSampler) first warms up (the first call JIT-compiles the
// oneDNN primitive and faults the buffers in), then calibrates: a run repeats the operation as many
// times as it takes to last at least `min_run_seconds`, so fast kernels are not timed at the
// clock's resolution; it reports elapsed / iterations, timed with std::chrono::steady_clock.
// Collectives use the same calibration over a timer of back-to-back calls (MakeBatchSampler). A
// figure takes `repeats` runs; its time is their median and its spread is
//     spread = (p90 - p10) / median
// (percentiles with linear interpolation between order statistics; for 7 runs this is close to
// (max - min) / median but ignores part of a single outlier). When the spread is above
// `max_relative_spread`, the figure is measured again from scratch, up to `max_retries` times; if
// every attempt is too wide, the attempt with the smallest spread is kept and flagged. A flagged
// figure is recorded (so the reader sees it) but never used in the derived figures.
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
  // "matmul", "convolution", "elementwise", or a collective: "all-reduce", "all-gather",
  // "reduce-scatter", "all-to-all"
  std::string kind;
  std::string name;   // e.g. "matmul f32 1024^3", unique within a profile
  std::string dtype;  // "f32", "f16", "bf16", "f64"
  // matmul: {batch, m, k, n}; convolution: {N, C_in, H, W, C_out, KH, KW} (stride 1, same
  // padding); elementwise: {elements} of c = a + b; collective: {devices, elements} (f32).
  std::vector<int64_t> shape;
  // Work of one operation: FLOPs (matmul: 2*b*m*k*n, convolution: 2*N*C_out*H*W*C_in*KH*KW) or,
  // for elementwise, bytes moved (3 * elements * element size: two reads and one write); for a
  // collective, its size as collective_cost.h prices it (4 * elements), so the throughput is the
  // algorithm bandwidth.
  double work = 0;
  std::string unit;                // "FLOP" or "B"
  double median_s = 0;             // seconds per operation, median of the kept attempt's runs
  double spread = 0;               // (p90 - p10) / median of the kept attempt's runs
  std::vector<double> runs;        // seconds per operation of each run of the kept attempt
  int64_t iterations_per_run = 1;  // operations per timed run (calibrated)
  int64_t retries = 0;             // re-measurements made because the spread was too wide
  bool flagged = false;            // spread still too wide after max_retries: not used

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

// Yields the seconds per operation of one timed run (or an error from the kernel).
using Sampler = std::function<Result<double>()>;

struct MeasureSettings {
  int64_t repeats = 7;                // timed runs per attempt (at least 1)
  double max_relative_spread = 0.05;  // an attempt with a wider spread is re-measured
  int64_t max_retries = 3;            // re-measurements before the figure is flagged

  friend bool operator==(const MeasureSettings&, const MeasureSettings&) = default;
};

// Runs the retry loop on `sample` and fills median_s, spread, runs, retries and flagged of
// `figure` (the rest is left as given). Errors of the sampler are returned.
Status MeasureFigure(const Sampler& sample, const MeasureSettings& settings, Measurement& figure);

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
  // Called with one line per figure as it completes ("[3/24] matmul f32 1024^3: 75.1 GFLOP/s ±
  // 2.1%"); null for quiet.
  std::function<void(const std::string&)> progress;
};

// The small, fast settings tests and `alpa profile --quick` use: small shapes, 3 repeats, short
// runs; well under a few seconds in all.
ProfileOptions QuickProfileOptions();

// Threads one device gets: hardware threads / devices, at least 1.
int64_t ThreadsPerDevice(int64_t devices);

struct ProfileDatabase;

// Measures every figure of `options` on this machine and returns the database (derived figures
// filled in). Restores the OpenMP thread count it found.
Result<ProfileDatabase> RunProfile(const ProfileOptions& options);

// "75.1 GFLOP/s" or "12.3 GB/s": a measurement's throughput with its unit.
std::string FormatThroughput(const Measurement& measurement);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PROFILER_H_
