// The profile database: what `alpa profile` measured on this machine, as JSON, and how the cost
// model uses it (ApplyProfile replaces a device's analytic peak FLOP/s and memory bandwidth with
// the measured ones).
//
// Format, version 3: runs in rounds, flagged by the median's uncertainty (profiler.h). Versions 1
// and 2 took each figure's runs back to back and flagged by spread; they are refused with a request
// to profile again. Units: seconds, FLOPs, bytes, FLOP/s, B/s; every field is written and read
// back as required:
//
//   {
//     "format": "alpa-profile",
//     "version": 3,
//     "cluster": "local:2",                       the --cluster argument profiled
//     "machine": {
//       "hardware_threads": 2,                    std::thread::hardware_concurrency
//       "devices": 2,                             devices sharing the machine (local:N)
//       "threads_per_device": 1,                  OpenMP threads each kernel was given
//       "onednn_version": "2.6.0",                the oneDNN library the kernels ran on
//       "core_round_trip_s": [4.8e-7, ...]        seconds per round trip of a cache line between
//     },                                          two cores (core_round_trip.h), one per round it
//                                                 was taken in; only with 2 devices or more
//     "settings": {"repeats": 9, "max_uncertainty": 0.05, "max_retries": 2,
//                  "min_run_seconds": 0.05, "spread": "(p90 - p10) / median",
//                  "uncertainty": "the larger side of the median's ... interval, over the median",
//                  "placements": 4},                       of each memory-bound figure's buffers
//                                                 (profiler.h); profiles before it have none: 1
//     "measurements": [
//       {"kind": "matmul", "name": "matmul f32 1024^3", "dtype": "f32", "shape": [1, 1024, 1024,
//        1024], "work": 2147483648, "unit": "FLOP", "median_s": 0.0105, "spread": 0.12,
//        "uncertainty": 0.021, "throughput": 2.04e11, "runs": [0.0104, ...],
//        "iterations_per_run": 5, "retries": 0, "flagged": false},
//                                                 runs: seconds per operation, one per round
//       {"kind": "all-reduce", "name": "all-reduce f32 64 MiB x2", "dtype": "f32", "shape": [2,
//        16777216], "work": 67108864, "unit": "B", ...},   work: the collective's size in bytes
//       ...                                       shapes: see runtime::Measurement (profiler.h)
//     ],
//     "derived": {                                what ApplyProfile uses; unflagged figures only
//       "peak_flops": {"f32": 2.04e11, ...},      best matmul throughput per dtype, when that
//                                                 figure is unflagged (no slower size stands in)
//       "memory_bandwidth": 1.5e10,               elementwise throughput at the largest size,
//                                                 0 when that one is flagged (smaller sizes fit
//                                                 in caches, so none stands in for it)
//       "kernel_launch_s": 1.2e-6,                the kernel-launch figure's seconds a kernel
//                                                 (kernel_launch.h); absent when it is flagged
//                                                 or was not measured (profiles before it)
//       "collectives": {                          per collective kind whose smallest and largest
//         "all-reduce": {"latency_s": 2.1e-5,     sizes are both unflagged: latency_s the smallest
//                        "bandwidth": 3.2e9}, ... size's time, bandwidth its largest's bytes over
//       }                                         the difference of their times, so that
//                                                 t(B) ~ latency_s + B / bandwidth
//     },
//     "collectives": {"measured": true, "reason": "", over all the devices, in-process; when
//                     "kinds": ["all-reduce", "all-gather", "reduce-scatter", "all-to-all"]}
//   }                                             not measured, "reason" says why
//
// "throughput" is work / median_s, written for readers and ignored on load. "derived" is
// recomputed on load from the measurements and must agree with what the file says (within
// rounding), so a hand-edited figure cannot silently disagree with its source. Every derived
// figure comes from definite measurements (the best matmul, the largest add, a collective's
// smallest and largest sizes) and is left out when one of those is flagged, so what a profile
// derives does not depend on which other figures it happened to flag.
#ifndef ALPA_RUNTIME_PROFILE_DATABASE_H_
#define ALPA_RUNTIME_PROFILE_DATABASE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/device.h"
#include "runtime/profiler.h"
#include "support/status.h"

namespace alpa::runtime {

inline constexpr int64_t kProfileFormatVersion = 3;
inline constexpr char kCollectivesOneDevice[] = "not measured: one device has no peer";
inline constexpr char kCollectivesNotRequested[] = "not measured: no sizes requested";

// A collective kind's alpha-beta fit (see the format above).
struct CollectiveFit {
  double latency_s = 0;  // alpha
  double bandwidth = 0;  // 1 / beta, B/s
  friend bool operator==(const CollectiveFit&, const CollectiveFit&) = default;
};

struct ProfileDatabase {
  std::string cluster;  // e.g. "local:2"
  int64_t hardware_threads = 0;
  int64_t devices = 1;
  int64_t threads_per_device = 1;
  std::string onednn_version;
  // Seconds per core round trip (core_round_trip.h), one per round it was taken in (every round
  // of the first pass, and of later ones while its median is uncertain), in order; empty when
  // not measured (one device, or one core).
  std::vector<double> core_round_trips_s;
  MeasureSettings settings;
  double min_run_seconds = 0;
  int64_t placements = 1;  // ProfileOptions::placements
  std::vector<Measurement> measurements;
  // Derived (DeriveFigures): unflagged figures only.
  std::map<std::string, double> peak_flops;          // dtype -> FLOP/s
  double memory_bandwidth = 0;                       // B/s
  double kernel_launch_s = 0;                        // seconds a kernel; 0: none
  std::map<std::string, CollectiveFit> collectives;  // kind -> fit
  // Whether collectives were measured, and why not ("" when they were).
  bool collectives_measured = false;
  std::string collectives_reason = kCollectivesNotRequested;

  friend bool operator==(const ProfileDatabase&, const ProfileDatabase&) = default;
};

// Fills peak_flops, memory_bandwidth and collectives from the measurements (see the format above).
void DeriveFigures(ProfileDatabase& database);

// The file form, indented by two, ending in a newline.
std::string ProfileJson(const ProfileDatabase& database);

// Parses a profile. Errors start with `source` and name the JSON path
// ("p.json: measurements[2].median_s: must be a positive number"), or the line and column of a
// syntax error.
Result<ProfileDatabase> ParseProfileJson(std::string_view text, const std::string& source);

// Reads and parses the file at `path`.
Result<ProfileDatabase> LoadProfile(const std::string& path);
// Writes ProfileJson(database) to `path`; the error names the path.
Status SaveProfile(const ProfileDatabase& database, const std::string& path);

// Replaces the device's peak FLOP/s for every dtype the database has a derived figure for, and its
// memory bandwidth and kernel launch when the database has them; other dtypes keep their figures.
// The figures are for one device of the profiled cluster (profiler.h). Fails when the database
// derived nothing.
Status ApplyProfile(const ProfileDatabase& database, cluster::DeviceSpec& device);
// The same for every host's device, with the cluster's note saying where the figures come from.
// Each collective fit t(B) = latency_s + B / bandwidth over the profiled P devices also sets the
// figures of every host's intra-host link that reproduce it through that kind's formula over one
// level of P devices (cost/collective_cost.h):
//   all-reduce (ring, two passes)  2(P-1)*alpha + 2(P-1)/P * B/b  ->  alpha = latency_s / 2(P-1),
//                                                                     b = 2(P-1)/P * bandwidth
//   all-gather, reduce-scatter     (P-1)*alpha + (P-1)/P * B/b    ->  alpha = latency_s / (P-1),
//   (ring, one pass), all-to-all                                      b = (P-1)/P * bandwidth
//   (pairwise, (P-1)(alpha + B/(P b)))
// The all-reduce's become the link's own figures; the other kinds' go into Link::collectives,
// since the in-process engine's threads run each kind at a speed of its own, which one pair of
// link figures cannot give (docs/cost-model.md, "What is modelled"). Broadcast, send/recv
// and collective-permute, which the profiler does not time, see the link's own figures. Other
// group sizes are priced from the same figures: an approximation (the engine's threads share the
// machine's cores and memory, which the formulas do not model).
Status ApplyProfile(const ProfileDatabase& database, cluster::ClusterSpec& spec);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PROFILE_DATABASE_H_
