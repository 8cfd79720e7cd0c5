#include "tools/alpa/cluster_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "cluster/cluster_json.h"
#include "cluster/presets.h"
#include "cluster/submesh.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/profile_command.h"

namespace alpa::tools {
namespace {

using cluster::ClusterSpec;
using cluster::HostSpec;
using cluster::Link;

// Up to four significant digits with a decimal prefix, trailing zeros dropped: datasheet figures
// print as written ("3.125 GB/s", "989.5 TFLOP/s", "25 Gbit/s").
std::string Rate(double value, const std::string& unit) {
  static constexpr std::array<const char*, 7> kPrefixes = {"", "k", "M", "G", "T", "P", "E"};
  size_t prefix = 0;
  while (std::fabs(value) >= 1000 && prefix + 1 < kPrefixes.size()) {
    value /= 1000;
    ++prefix;
  }
  return fmt::format("{:.4g} {}{}", value, kPrefixes[prefix], unit);
}

std::string Bandwidth(double bytes_per_second) { return Rate(bytes_per_second, "B/s"); }

// "3.13 GB/s (25.0 Gbit/s)": network links are sold in bits.
std::string NetworkBandwidth(double bytes_per_second) {
  return fmt::format("{} ({})", Bandwidth(bytes_per_second), Rate(bytes_per_second * 8, "bit/s"));
}

// The dtypes any device of the cluster has a figure for: the usual ones in their usual order, then
// the others alphabetically.
std::vector<std::string> Dtypes(const ClusterSpec& spec) {
  std::set<std::string> present;
  for (const HostSpec& host : spec.hosts) {
    for (const auto& [dtype, flops] : host.device.peak_flops) present.insert(dtype);
  }
  std::vector<std::string> dtypes;
  for (const std::string& dtype : cluster::DisplayedDtypes()) {
    if (present.erase(dtype) > 0) dtypes.push_back(dtype);
  }
  dtypes.insert(dtypes.end(), present.begin(), present.end());
  return dtypes;
}

// Runs of identical consecutive hosts, each with its label: "3" for one host, "0-1" for several.
std::vector<std::pair<std::string, const HostSpec*>> HostRuns(const ClusterSpec& spec) {
  std::vector<std::pair<std::string, const HostSpec*>> runs;
  for (size_t i = 0; i < spec.hosts.size();) {
    size_t end = i + 1;
    while (end < spec.hosts.size() && spec.hosts[end] == spec.hosts[i]) ++end;
    runs.emplace_back(end - i == 1 ? fmt::format("{}", i) : fmt::format("{}-{}", i, end - 1),
                      &spec.hosts[i]);
    i = end;
  }
  return runs;
}

std::string HostsTable(const ClusterSpec& spec) {
  Table table({"hosts", "devices", "device type", "intra-host link", "bandwidth", "latency"},
              {Table::Align::kLeft, Table::Align::kRight, Table::Align::kLeft, Table::Align::kLeft,
               Table::Align::kRight, Table::Align::kRight});
  for (const auto& [hosts, host] : HostRuns(spec)) {
    table.AddRow({hosts, fmt::format("{}", host->devices), host->device.name,
                  std::string(cluster::TopologyName(host->intra_host.topology)),
                  Bandwidth(host->intra_host.bandwidth) + " per device",
                  FormatSeconds(host->intra_host.latency)});
  }
  return table.Render();
}

// The figures some collectives see in place of their hosts' intra-host link's (Link::collectives,
// set from a profile); "" when no host has any.
std::string CollectiveFiguresTable(const ClusterSpec& spec) {
  Table table(
      {"hosts", "collective", "bandwidth", "latency"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight});
  bool any = false;
  for (const auto& [hosts, host] : HostRuns(spec)) {
    for (const auto& [name, figures] : host->intra_host.collectives) {
      table.AddRow({hosts, name, Bandwidth(figures.bandwidth) + " per device",
                    FormatSeconds(figures.latency)});
      any = true;
    }
  }
  return any ? "\nintra-host figures of their own (the other collectives see the link's):\n" +
                   table.Render()
             : "";
}

std::string DevicesTable(const ClusterSpec& spec) {
  const std::vector<std::string> dtypes = Dtypes(spec);
  // kernels: how the cost model sees the device's compiler (cluster::DeviceSpec::fuses_kernels);
  // launch: what each kernel costs beyond its roofline time (DeviceSpec::kernel_launch_s).
  std::vector<std::string> headers = {"device type", "memory", "memory bw", "kernels", "launch"};
  std::vector<Table::Align> alignments = {Table::Align::kLeft, Table::Align::kRight,
                                          Table::Align::kRight, Table::Align::kLeft,
                                          Table::Align::kRight};
  for (const std::string& dtype : dtypes) {
    headers.push_back(dtype);
    alignments.push_back(Table::Align::kRight);
  }
  Table table(headers, alignments);
  std::set<std::string> seen;
  for (const HostSpec& host : spec.hosts) {
    if (!seen.insert(host.device.name).second) continue;
    std::vector<std::string> row = {host.device.name, FormatBytes(host.device.memory_bytes),
                                    Bandwidth(host.device.memory_bandwidth),
                                    host.device.fuses_kernels ? "fused" : "loops",
                                    FormatSeconds(host.device.kernel_launch_s)};
    for (const std::string& dtype : dtypes) {
      const double flops = host.device.PeakFlops(dtype);
      row.push_back(flops > 0 ? Rate(flops, "FLOP/s") : "-");
    }
    table.AddRow(row);
  }
  return table.Render();
}

std::string LinkLine(const Link& link, const std::string& per) {
  return fmt::format("{} per {}, latency {}", NetworkBandwidth(link.bandwidth), per,
                     FormatSeconds(link.latency));
}

// "(1,1) (1,2) (1,4) (1,8) (2,8)"; with several host types, one list per type:
// "V100-SXM2-16GB: (1,1) ... ; A100-SXM4-40GB: (1,1) ...".
std::string SubmeshList(const ClusterSpec& spec) {
  const std::vector<cluster::HostType> types = cluster::HostTypes(spec);
  std::string list;
  int64_t type = -1;
  for (const cluster::Submesh& submesh : cluster::EnumerateSubmeshes(spec)) {
    if (types.size() > 1 && submesh.host_type != type) {
      type = submesh.host_type;
      list += fmt::format("{}{}:", list.empty() ? "" : "; ", types[type].host.device.name);
    }
    list += fmt::format("{}({})", list.empty() ? "" : " ", fmt::join(submesh.shape, ","));
  }
  return list;
}

}  // namespace

CLI::App* AddClusterCommand(CLI::App& app, ClusterOptions& options) {
  CLI::App* command =
      app.add_subcommand("cluster", "Cluster specs: presets and cluster files (see `show`)");
  command->require_subcommand(1);
  options.show = command->add_subcommand(
      "show", "Print a cluster spec: hosts, devices, peak FLOP/s, memory and links");
  options.show
      ->add_option("SPEC", options.spec,
                   "PRESET[:HOSTS[xDEVICES]] (e.g. p3.16xlarge:2, v100-32gb:1x4, local:4) or a "
                   "cluster file FILE.json")
      ->required();
  options.show->add_option("--profile", options.profile_path,
                           "A profile database (alpa profile) whose measured figures replace the "
                           "analytic device and intra-host link figures");
  options.show->add_flag("--json", options.json,
                         "Print the spec in the cluster file format (what --cluster FILE.json "
                         "reads)");
  std::string presets;
  for (const cluster::PresetInfo& preset : cluster::ClusterPresets()) {
    presets += fmt::format("\n  {:<14}{}", preset.name, preset.description);
  }
  options.show->footer("Presets:" + presets +
                       "\nThe cluster file format is documented in src/cluster/cluster_json.h; "
                       "examples/clusters/ has an example. Exit codes: 0 success, 2 bad input.");
  return command;
}

std::string ClusterReport(const ClusterSpec& spec) {
  std::string out;
  const int64_t devices = cluster::TotalDevices(spec);
  out += fmt::format("cluster     {}\n", spec.name.empty() ? "(unnamed)" : spec.name);
  if (!spec.note.empty()) out += fmt::format("note        {}\n", spec.note);
  if (cluster::IsHomogeneous(spec)) {
    out += fmt::format("devices     {} ({} host{} x {} {})\n", devices, spec.hosts.size(),
                       spec.hosts.size() == 1 ? "" : "s", spec.hosts[0].devices,
                       spec.hosts[0].device.name);
  } else {
    out += fmt::format("devices     {} on {} hosts (heterogeneous)\n", devices, spec.hosts.size());
  }
  out += fmt::format("memory      {} in all\n", FormatBytes(cluster::AggregateMemoryBytes(spec)));
  std::string peak;
  for (const std::string& dtype : Dtypes(spec)) {
    peak += fmt::format("{}{} {}", peak.empty() ? "" : ", ", dtype,
                        Rate(cluster::AggregatePeakFlops(spec, dtype), "FLOP/s"));
  }
  out += fmt::format("peak        {} (all devices, dense)\n", peak);
  out += fmt::format("inter-host  {}\n", LinkLine(spec.inter_host, "host"));
  if (spec.racks.has_value()) {
    out += fmt::format("racks       {} of {} hosts; inter-rack {}\n",
                       static_cast<int64_t>(spec.hosts.size()) / spec.racks->hosts_per_rack,
                       spec.racks->hosts_per_rack, LinkLine(spec.racks->inter_rack, "rack"));
  }
  out += fmt::format("sub-meshes  {} (Alpa's power_of_two space)\n", SubmeshList(spec));
  out += "\n" + HostsTable(spec) + CollectiveFiguresTable(spec) + "\n" + DevicesTable(spec);
  return out;
}

int RunCluster(const ClusterOptions& options) {
  if (options.show == nullptr || !options.show->parsed()) {
    return ReportError(InvalidArgument("cluster: no sub-command given; see alpa cluster --help"));
  }
  Result<cluster::ClusterSpec> spec = ProfiledCluster(options.spec, options.profile_path);
  if (!spec.ok()) return ReportError(spec.status());
  fmt::print("{}", options.json ? cluster::ClusterJson(*spec) : ClusterReport(*spec));
  return kExitOk;
}

}  // namespace alpa::tools
