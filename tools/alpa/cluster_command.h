// `alpa cluster show SPEC [--json]`: a cluster spec (a preset such as p3.16xlarge:2, or a cluster
// file) as a readable report, or with --json in the cluster file format (cluster/cluster_json.h),
// so `alpa cluster show p3.16xlarge:2 --json > c.json && alpa cluster show c.json` round-trips.
#ifndef ALPA_TOOLS_ALPA_CLUSTER_COMMAND_H_
#define ALPA_TOOLS_ALPA_CLUSTER_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>

#include "cluster/cluster_spec.h"

namespace alpa::tools {

struct ClusterOptions {
  std::string spec;
  std::string profile_path;  // --profile: measured figures in place of the analytic ones
  bool json = false;
  CLI::App* show = nullptr;  // set by AddClusterCommand
};

// Adds `cluster` with its sub-command `show`; returns `cluster`.
CLI::App* AddClusterCommand(CLI::App& app, ClusterOptions& options);

// Returns the process exit code (command_util.h).
int RunCluster(const ClusterOptions& options);

// The readable report `alpa cluster show` prints.
std::string ClusterReport(const cluster::ClusterSpec& spec);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_CLUSTER_COMMAND_H_
