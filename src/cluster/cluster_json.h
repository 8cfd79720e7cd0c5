// The cluster file: a ClusterSpec as JSON. `alpa cluster show SPEC --json` writes it and every
// `--cluster FILE.json` reads it, so a preset can be dumped, edited and read back.
//
// Format (all fields required unless marked optional; units: bytes, bytes per second in one
// direction, seconds, FLOP/s; 25 Gbps is 3.125e9 B/s):
//
//   {
//     "name": "two-kinds",                      optional, a label
//     "note": "figures: measured 2024-05-01",   optional, where the figures come from
//     "device_types": {                          each device type once, by name
//       "V100-SXM2-16GB": {
//         "peak_flops": {"f64": 7.8e12, "f32": 15.7e12, "f16": 125e12},   FLOP/s per dtype, dense
//         "memory_bytes": 17179869184,
//         "memory_bandwidth": 9e11,
//         "fuses_kernels": true,                 optional (default true): the compiler fuses
//                                                as XLA on GPUs (false: only elementwise
//                                                chains run as loops, as on `local`)
//         "kernel_launch": 1e-6                  optional (default 0): seconds each kernel
//       },                                       costs beyond its roofline time (device.h)
//       "A100-SXM4-40GB": {
//         "peak_flops": {"f32": 19.5e12, "tf32": 156e12, "f16": 312e12, "bf16": 312e12},
//         "memory_bytes": 42949672960,
//         "memory_bandwidth": 1.555e12
//       }
//     },
//     "hosts": [                                 in device-numbering order
//       {"count": 2,                             optional (default 1): this many identical hosts
//        "device_type": "V100-SXM2-16GB", "devices": 8,
//        "intra_host": {"topology": "cube_mesh", "bandwidth": 1.5e11, "latency": 5e-6}},
//       {"device_type": "A100-SXM4-40GB", "devices": 4,
//        "intra_host": {"topology": "switch", "bandwidth": 3e11, "latency": 5e-6}}
//     ],                                         an intra_host link may add "collectives":
//                                                {"all-gather": {"bandwidth": 2.5e10,
//                                                "latency": 5e-6}, ...}, figures those
//                                                collectives see in place of the link's
//                                                (link.h; `--profile` sets them)
//     "inter_host": {"bandwidth": 3.125e9, "latency": 2.5e-5},   per host
//     "racks": {"hosts_per_rack": 3,                               optional, a third level
//               "inter_rack": {"bandwidth": 1.25e10, "latency": 5e-5}}   per rack
//   }
//
// Topologies: "all_to_all", "switch", "cube_mesh", "ring", "pcie" (link.h). Unknown keys are
// errors (a misspelt key would otherwise be silently ignored). examples/clusters/ has examples.
#ifndef ALPA_CLUSTER_CLUSTER_JSON_H_
#define ALPA_CLUSTER_CLUSTER_JSON_H_

#include <string>
#include <string_view>

#include "cluster/cluster_spec.h"
#include "support/status.h"

namespace alpa::cluster {

// Parses and validates a cluster file. Errors start with `source` and name the JSON path:
// "c.json: hosts[1].devices: must be at least 1", or the line and column of a syntax error.
Result<ClusterSpec> ParseClusterJson(std::string_view text, const std::string& source);

// Reads the file at `path` (plain or .gz) and parses it.
Result<ClusterSpec> LoadClusterFile(const std::string& path);

// The file form of `spec`, indented by two, ending in a newline. Consecutive identical hosts are
// written as one entry with a count. ParseClusterJson(ClusterJson(spec)) == spec.
std::string ClusterJson(const ClusterSpec& spec);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_CLUSTER_JSON_H_
