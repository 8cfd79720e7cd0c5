// Named clusters and the `--cluster` argument.
//
//   --cluster PRESET[:HOSTS[xDEVICES]]   e.g. p3.16xlarge (1 host), p3.16xlarge:2, v100-32gb:1x4
//   --cluster FILE.json                  a cluster file (cluster_json.h)
//
// PRESET:HOSTS gives HOSTS hosts of the preset; xDEVICES uses DEVICES of each host's devices (at
// most the preset's count). `local` is this machine: one host whose devices are CPU cores;
// `local:N` is N devices (default: the number of hardware threads), `local:HxD` H hosts of D
// (processes on this machine). Its figures are estimates until the profiler measures them.
#ifndef ALPA_CLUSTER_PRESETS_H_
#define ALPA_CLUSTER_PRESETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "support/status.h"

namespace alpa::cluster {

struct PresetInfo {
  std::string name;
  std::string description;
};

// The presets, in the order `alpa cluster show` lists them.
const std::vector<PresetInfo>& ClusterPresets();

// "p3.16xlarge, v100-32gb, p4d.24xlarge, dgx-h100, local".
std::string PresetNames();

// `hosts` hosts of preset `name`, each with `devices_per_host` devices (default: all of the
// preset's; for `local` the hardware threads). Errors: unknown name (lists the presets), zero
// hosts or devices, more devices than a host of the preset has.
Result<ClusterSpec> MakePresetCluster(const std::string& name, int64_t hosts,
                                      std::optional<int64_t> devices_per_host);

// Parses a `--cluster` argument (see the top of this file). Errors start with the argument.
Result<ClusterSpec> ParseClusterArgument(const std::string& argument);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_PRESETS_H_
