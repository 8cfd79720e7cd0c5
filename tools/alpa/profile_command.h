// `alpa profile --cluster local[:N] -o FILE [--repeats R] [--quick] [--quiet] [--compare PREV]`:
// measures this machine (matmul and convolution FLOP/s per dtype, elementwise bandwidth,
// collectives among the N devices over the in-process communicator; runtime/profiler.h), writes
// the profile database (runtime/profile_database.h) to FILE and prints a table of the figures and
// what is derived from them; with --compare, also how far each figure moved since the profile
// PREV (runtime/profile_comparison.h). Progress goes to stderr, a line per round, unless --quiet.
#ifndef ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_
#define ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "cluster/cluster_spec.h"
#include "support/status.h"

namespace alpa::tools {

struct ProfileCommandOptions {
  std::string cluster = "local";
  std::string output;
  int64_t repeats = 0;  // 0: the default (9, or 3 with --quick)
  bool quick = false;
  bool quiet = false;
  int64_t placements = 4;  // ProfileOptions::placements
  std::string compare;     // a previous profile to compare with; empty: none
};

// Adds `profile`; returns it.
CLI::App* AddProfileCommand(CLI::App& app, ProfileCommandOptions& options);

// Returns the process exit code (command_util.h).
int RunProfile(const ProfileCommandOptions& options);

// The cluster of a --cluster argument, with the figures of the profile at `profile_path` (a
// --profile flag; empty: the analytic figures) in place of its devices' and intra-host links'
// (runtime::ApplyProfile). The profile must have measured as many devices as each host has: a
// device of local:2 is half the machine, one of local:4 a quarter. Errors name the flag.
Result<cluster::ClusterSpec> ProfiledCluster(const std::string& argument,
                                             const std::string& profile_path);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_
