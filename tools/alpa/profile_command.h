// `alpa profile --cluster local[:N] -o FILE [--repeats R] [--quick] [--quiet]`: measures this
// machine (matmul and convolution FLOP/s per dtype, elementwise bandwidth; runtime/profiler.h),
// writes the profile database (runtime/profile_database.h) to FILE and prints a table of the
// figures. Progress goes to stderr, one line per figure, unless --quiet.
#ifndef ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_
#define ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace alpa::tools {

struct ProfileCommandOptions {
  std::string cluster = "local";
  std::string output;
  int64_t repeats = 0;  // 0: the default (7, or 3 with --quick)
  bool quick = false;
  bool quiet = false;
};

// Adds `profile`; returns it.
CLI::App* AddProfileCommand(CLI::App& app, ProfileCommandOptions& options);

// Returns the process exit code (command_util.h).
int RunProfile(const ProfileCommandOptions& options);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_PROFILE_COMMAND_H_
