#include "tools/alpa/profile_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/presets.h"
#include "runtime/core_round_trip.h"
#include "runtime/profile_comparison.h"
#include "runtime/profile_database.h"
#include "runtime/profiler.h"
#include "support/table.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

// Two profiles of one machine further apart than this on a figure: the machine changed between
// them (issue 4 asks that two consecutive profiles agree within 10%).
constexpr double kMovedLimit = 0.10;

// Fails unless `path` can be written: its folder exists and is writable, and the path is not a
// folder or a read-only file. Checked before measuring, so a typo costs nothing.
Status CheckWritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path target(path);
  if (fs::is_directory(target, error)) {
    return InvalidArgument("-o {}: is a directory; give a file name", path);
  }
  if (fs::exists(target, error)) {
    if (access(path.c_str(), W_OK) != 0) return InvalidArgument("-o {}: not writable", path);
    return Status::Ok();
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, error)) {
    return InvalidArgument("-o {}: folder {} does not exist", path, parent.string());
  }
  if (access(parent.c_str(), W_OK) != 0) {
    return InvalidArgument("-o {}: folder {} is not writable", path, parent.string());
  }
  return Status::Ok();
}

std::string FiguresTable(const runtime::ProfileDatabase& db) {
  Table table(
      {"figure", "dtype", "shape", "throughput", "median ±", "spread", "runs", "flagged"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight,
       Table::Align::kRight, Table::Align::kRight, Table::Align::kRight, Table::Align::kLeft});
  for (const runtime::Measurement& m : db.measurements) {
    table.AddRow({m.name, m.dtype, fmt::format("{}", fmt::join(m.shape, "x")),
                  runtime::FormatThroughput(m), fmt::format("{:.1f}%", m.uncertainty * 100),
                  fmt::format("{:.1f}%", m.spread * 100),
                  fmt::format("{}x{}", m.runs.size(), m.iterations_per_run),
                  m.flagged ? "FLAGGED (not used)" : ""});
  }
  return table.Render();
}

// The cores' round trip (runtime/core_round_trip.h) a profile took in its rounds, if any.
void PrintCoreRoundTrip(const std::vector<double>& round_trips) {
  if (round_trips.empty()) return;
  fmt::print(
      "cores       round trip between two cores: {:.0f} ns (p10 {:.0f}, p90 {:.0f} over {} "
      "rounds)\n",
      runtime::Median(round_trips) * 1e9, runtime::Quantile(round_trips, 0.1) * 1e9,
      runtime::Quantile(round_trips, 0.9) * 1e9, round_trips.size());
  if (runtime::CoresMovedDuring(round_trips)) {
    fmt::print(
        "            the host moved the cores during the profile: its collective figures mix two "
        "placements\n");
  }
}

void PrintDerivedFigures(const runtime::ProfileDatabase& db) {
  std::string peaks;
  for (const auto& [dtype, flops] : db.peak_flops) {
    peaks += fmt::format("{}{} {:.1f} GFLOP/s", peaks.empty() ? "" : ", ", dtype, flops / 1e9);
  }
  fmt::print("derived     peak matmul: {}\n", peaks.empty() ? "none (best sizes flagged)" : peaks);
  fmt::print("            memory bandwidth: {}\n",
             db.memory_bandwidth > 0 ? fmt::format("{:.2f} GB/s", db.memory_bandwidth / 1e9)
                                     : "none (the largest add is flagged)");
  fmt::print("            kernel launch: {}\n",
             db.kernel_launch_s > 0
                 ? fmt::format("{:.2f} us (the runtime's dispatch of one instruction)",
                               db.kernel_launch_s * 1e6)
                 : "none (flagged, or not measured)");
  int64_t flagged = 0;
  for (const runtime::Measurement& m : db.measurements) flagged += m.flagged ? 1 : 0;
  fmt::print(
      "flagged     {} of {} figures (median uncertain by more than {:.1f}% after up to {} "
      "further pass(es))\n",
      flagged, db.measurements.size(), db.settings.max_uncertainty * 100, db.settings.max_retries);
  if (!db.collectives_measured) {
    fmt::print("collectives {}\n", db.collectives_reason);
    return;
  }
  std::string prefix = "collectives";
  for (const auto& [kind, fit] : db.collectives) {
    fmt::print(
        "{:<11} {}: latency {:.1f} us, bandwidth {:.2f} GB/s (t = latency + bytes / "
        "bandwidth)\n",
        prefix, kind, fit.latency_s * 1e6, fit.bandwidth / 1e9);
    prefix = "";
  }
  if (db.collectives.empty()) {
    fmt::print("collectives none (each kind's smallest or largest size is flagged)\n");
  }
  PrintCoreRoundTrip(db.core_round_trips_s);
}

// "13.5% matmul bf16 512^3".
std::string ChangeText(const runtime::FigureChange& change) {
  return fmt::format("{:.1f}% {}", change.relative * 100, change.name);
}

// The change of `changes` that moved most, or "none to compare".
std::string LargestText(const std::vector<runtime::FigureChange>& changes) {
  if (changes.empty()) return "none to compare";
  return ChangeText(
      *std::max_element(changes.begin(), changes.end(),
                        [](const auto& a, const auto& b) { return a.relative < b.relative; }));
}

// What moved since the profile at `path`: a profile pins its figures down within itself, and only
// a comparison shows that the machine's speed changed between two.
void PrintComparison(const std::string& path, const runtime::ProfileDatabase& before,
                     const runtime::ProfileDatabase& after) {
  const runtime::ProfileComparison comparison = runtime::CompareProfiles(before, after);
  fmt::print(
      "\ncompared    with {}: {} figures kept by both, {} not compared (flagged, or not in the "
      "earlier one)\n",
      path, comparison.measurements.size(), comparison.not_compared.size());
  fmt::print("            largest difference: {}; of a derived figure: {}\n",
             LargestText(comparison.measurements), LargestText(comparison.derived));
  std::vector<runtime::FigureChange> all = comparison.measurements;
  all.insert(all.end(), comparison.derived.begin(), comparison.derived.end());
  const std::vector<runtime::FigureChange> apart = runtime::MovedMoreThan(all, kMovedLimit);
  if (comparison.core_round_trip.has_value()) {
    fmt::print("            core round trip: {:.0f} ns then, {:.0f} ns now{}\n",
               comparison.core_round_trip->before * 1e9, comparison.core_round_trip->after * 1e9,
               comparison.cores_placed_differently
                   ? ": the host placed the cores differently, and collectives move with that"
                   : "");
  }
  fmt::print("            more than {:.0f}% apart: {}\n", kMovedLimit * 100, apart.size());
  for (const runtime::FigureChange& change : apart) {
    const bool placed = change.collective && comparison.cores_placed_differently;
    fmt::print("              {}{}\n", ChangeText(change),
               placed ? " (cores placed differently)" : "");
  }
}

}  // namespace

CLI::App* AddProfileCommand(CLI::App& app, ProfileCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "profile",
      "Measure this machine (matmul/convolution FLOP/s, memory bandwidth, collectives among the "
      "N devices) into a profile database the cost model can use");
  command->add_option("--cluster", options.cluster,
                      "local or local:N: this machine as N devices, each measured with "
                      "cores/N threads (default: local)");
  command->add_option("-o,--output", options.output, "Write the profile database (JSON) here")
      ->required();
  command
      ->add_option("--repeats", options.repeats,
                   "Rounds per pass: timed runs of each figure (default 9, 3 with --quick)")
      ->check(CLI::Range(int64_t{2}, int64_t{1000}));
  command->add_flag("--quick", options.quick,
                    "Small shapes, few repeats: a check that runs in about a second, not a "
                    "profile to plan with");
  command->add_flag("--quiet", options.quiet, "No progress lines on stderr");
  command
      ->add_option("--placements", options.placements,
                   "Placements in memory of each memory-bound figure's buffers (adds, "
                   "collectives), each run on the next (default 4; 1: buffers allocated once, as "
                   "profiles before it)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  command->add_option("--compare", options.compare,
                      "A profile of this machine taken before (same --cluster): print how far "
                      "each figure both kept moved, and those more than 10% apart");
  command->footer(
      "Each figure is the median of timed runs taken in rounds (one run of every figure per "
      "round, so each figure's runs span the whole profile and a slow spell of a shared machine "
      "moves few of them); a memory-bound figure's runs take its buffers in 4 placements in memory "
      "in turn (where a kernel's pages land moves its speed, and an allocation keeps its pages). "
      "Per figure it records the spread, (p90 - p10) / median, and the median's uncertainty: the "
      "larger side of its 95% confidence interval, over the median. A "
      "figure whose median is uncertain by more than 5% gets another pass of rounds (at most 2 "
      "more); if it stays so, it is kept but flagged, and flagged figures are never used. "
      "With N >= 2 devices, all-reduce, "
      "all-gather, reduce-scatter and all-to-all over all N devices (f32, 4 KiB to 64 MiB; 4 and "
      "256 KiB with --quick) run over the in-process communicator, one thread per device; their "
      "throughput is the algorithm bandwidth (size / time), and beside them, in the same rounds, "
      "the round trip of a cache line between two cores, which tells where the host placed them "
      "(a virtual machine's collectives move with that placement; --compare says when it "
      "changed). Derived, each only when the figures "
      "it comes from are kept: a dtype's peak (its best matmul), the memory bandwidth (the "
      "largest add), each collective kind's latency (smallest size) and bandwidth (largest). A "
      "full profile takes 3 to 12 minutes on 2 cores (longer when more figures need more passes) "
      "and about 6 GB of memory. The file format is documented in src/runtime/profile_database.h. "
      "Exit codes: 0 success, 2 bad input.");
  return command;
}

int RunProfile(const ProfileCommandOptions& options) {
  const std::string name = options.cluster.substr(0, options.cluster.find(':'));
  if (name != "local") {
    return ReportError(InvalidArgument(
        "--cluster {}: profiling measures this machine; use local[:N]", options.cluster));
  }
  Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument(options.cluster);
  if (!spec.ok()) return ReportError(spec.status().WithContext("--cluster"));
  Status writable = CheckWritable(options.output);
  if (!writable.ok()) return ReportError(writable);
  std::optional<runtime::ProfileDatabase> previous;
  if (!options.compare.empty()) {
    Result<runtime::ProfileDatabase> loaded = runtime::LoadProfile(options.compare);
    if (!loaded.ok()) return ReportError(loaded.status().WithContext("--compare"));
    if (loaded->devices != cluster::TotalDevices(*spec)) {
      return ReportError(InvalidArgument(
          "--compare {}: it measured {} as {} devices, this profile is of {}; compare profiles of "
          "the same --cluster",
          options.compare, loaded->cluster, loaded->devices, options.cluster));
    }
    previous = std::move(*loaded);
  }

  runtime::ProfileOptions profile =
      options.quick ? runtime::QuickProfileOptions() : runtime::ProfileOptions();
  profile.cluster_name = options.cluster;
  profile.devices = cluster::TotalDevices(*spec);
  if (options.repeats > 0) profile.measure.repeats = options.repeats;
  profile.placements = options.placements;
  if (!options.quiet) {
    fmt::print(stderr, "profiling {}: {} device(s), {} thread(s) each\n", options.cluster,
               profile.devices, runtime::ThreadsPerDevice(profile.devices));
    profile.progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  }
  Result<runtime::ProfileDatabase> db = runtime::RunProfile(profile);
  if (!db.ok()) return ReportError(db.status());
  Status saved = runtime::SaveProfile(*db, options.output);
  if (!saved.ok()) return ReportError(saved.WithContext("-o"));

  fmt::print("profile     {} ({} device(s), {} thread(s) each, oneDNN {})\n", db->cluster,
             db->devices, db->threads_per_device, db->onednn_version);
  fmt::print("written to  {}\n\n", options.output);
  fmt::print("{}\n", FiguresTable(*db));
  PrintDerivedFigures(*db);
  if (previous.has_value()) PrintComparison(options.compare, *previous, *db);
  return kExitOk;
}

Result<cluster::ClusterSpec> ProfiledCluster(const std::string& argument,
                                             const std::string& profile_path) {
  Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument(argument);
  if (!spec.ok()) return spec.status().WithContext("--cluster");
  if (profile_path.empty()) return spec;
  Result<runtime::ProfileDatabase> profile = runtime::LoadProfile(profile_path);
  if (!profile.ok()) return profile.status().WithContext("--profile");
  for (const cluster::HostSpec& host : spec->hosts) {
    if (host.devices != profile->devices) {
      return InvalidArgument(
          "--profile {}: it measured {} as {} devices, the cluster '{}' has {} per host; profile "
          "with --cluster local:{}",
          profile_path, profile->cluster, profile->devices, argument, host.devices, host.devices);
    }
  }
  const Status applied = runtime::ApplyProfile(*profile, *spec);
  if (!applied.ok()) return applied.WithContext("--profile " + profile_path);
  return spec;
}

}  // namespace alpa::tools
