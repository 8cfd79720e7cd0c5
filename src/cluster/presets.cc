#include "cluster/presets.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <thread>

#include "cluster/cluster_json.h"
#include "cluster/device.h"

namespace alpa::cluster {
namespace {

constexpr double kGBps = 1e9;      // GB/s in B/s
constexpr double kGbps = 1e9 / 8;  // Gbit/s in B/s: 25 Gbps = 3.125e9 B/s
constexpr int64_t kMaxHosts = int64_t{1} << 20;
constexpr int64_t kMaxLocalDevices = 4096;

// Latencies are not on the datasheets; these are typical figures (NCCL over NVLink: a few us;
// TCP over Ethernet: tens of us; EFA and InfiniBand: a few us to ~15 us), to be replaced by the
// profiler's measurements.
constexpr double kNvlinkLatency = 5e-6;

HostSpec Host(DeviceSpec device, int64_t devices, Topology topology, double bandwidth,
              double latency) {
  return HostSpec{std::move(device), devices, Link{bandwidth, latency, topology, {}}};
}

// A network between hosts (its topology is not modelled).
Link Network(double bandwidth, double latency) {
  return Link{bandwidth, latency, Topology::kSwitch, {}};
}

// One host of each preset, and its inter-host network.
struct PresetHost {
  HostSpec host;
  Link inter_host;
  std::string note;
};

std::optional<PresetHost> PresetHostOf(const std::string& name) {
  // AWS EC2 P3 instances: p3.16xlarge has 8 V100 (16 GB) with "NVLink peer to peer" and 25 Gbps
  // networking (Alpa's paper testbed). V100 NVLink 2: 6 links x 25 GB/s per direction = 150 GB/s
  // per direction (the datasheet's 300 GB/s counts both directions), in a hybrid cube-mesh.
  if (name == "p3.16xlarge") {
    return PresetHost{Host(V100Sxm2(16), 8, Topology::kCubeMesh, 150 * kGBps, kNvlinkLatency),
                      Network(25 * kGbps, 25e-6), ""};
  }
  // A DGX-1V-like host: 8 V100 (32 GB), NVLink 300 GB/s (both directions, 150 per direction),
  // hybrid cube-mesh. Network as on AWS p3dn.24xlarge (the 8x V100-32GB instance): 100 Gbps.
  if (name == "v100-32gb") {
    return PresetHost{Host(V100Sxm2(32), 8, Topology::kCubeMesh, 150 * kGBps, kNvlinkLatency),
                      Network(100 * kGbps, 25e-6), ""};
  }
  // AWS p4d.24xlarge: 8 A100 (40 GB) on NVSwitch, NVLink 3 600 GB/s both directions (300 per
  // direction), 400 Gbps EFA (4 x 100 Gbps).
  if (name == "p4d.24xlarge") {
    return PresetHost{Host(A100Sxm40GB(), 8, Topology::kSwitch, 300 * kGBps, kNvlinkLatency),
                      Network(400 * kGbps, 15e-6), ""};
  }
  // NVIDIA DGX H100: 8 H100 SXM (80 GB), 4 NVSwitches, NVLink 4 900 GB/s both directions (450 per
  // direction), 8 x 400 Gbps ConnectX-7 InfiniBand for the compute fabric = 3200 Gbps = 400 GB/s.
  if (name == "dgx-h100") {
    return PresetHost{Host(H100Sxm80GB(), 8, Topology::kSwitch, 450 * kGBps, kNvlinkLatency),
                      Network(8 * 400 * kGbps, 5e-6), ""};
  }
  // This machine: CPU cores share the memory (all-to-all through it). Estimates: a copy between
  // cores at ~10 GB/s and ~1 us; between processes (hosts of local:HxD) the same over loopback
  // at ~10 us.
  if (name == "local") {
    return PresetHost{Host(CpuCoreEstimate(1), 1, Topology::kAllToAll, 10 * kGBps, 1e-6),
                      Network(10 * kGBps, 10e-6), "figures: estimated, not profiled"};
  }
  return std::nullopt;
}

int64_t HardwareThreads() {
  const unsigned threads = std::thread::hardware_concurrency();
  return threads == 0 ? 1 : static_cast<int64_t>(threads);
}

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{8} << 30;  // unknown: assume 8 GiB
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

// A positive decimal integer, the whole of `text`; nullopt otherwise.
std::optional<int64_t> ParseCount(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

const std::vector<PresetInfo>& ClusterPresets() {
  static const std::vector<PresetInfo> kPresets = {
      {"p3.16xlarge",
       "AWS p3.16xlarge: 8x V100-SXM2-16GB, NVLink cube-mesh, 25 Gbps (Alpa's testbed)"},
      {"v100-32gb", "8x V100-SXM2-32GB, NVLink 300 GB/s (both directions), 100 Gbps"},
      {"p4d.24xlarge", "AWS p4d.24xlarge: 8x A100-SXM4-40GB, NVSwitch, 400 Gbps EFA"},
      {"dgx-h100", "NVIDIA DGX H100: 8x H100-SXM5-80GB, NVSwitch, 8x 400 Gbps InfiniBand"},
      {"local", "this machine: its CPU cores as devices (figures estimated, not profiled)"},
  };
  return kPresets;
}

std::string PresetNames() {
  std::string names;
  for (const PresetInfo& preset : ClusterPresets()) {
    names += (names.empty() ? "" : ", ") + preset.name;
  }
  return names;
}

Result<ClusterSpec> MakePresetCluster(const std::string& name, int64_t hosts,
                                      std::optional<int64_t> devices_per_host) {
  std::optional<PresetHost> preset = PresetHostOf(name);
  if (!preset.has_value()) {
    return NotFound(
        "unknown cluster preset '{}'; the presets are {} (or give a cluster file, "
        "FILE.json)",
        name, PresetNames());
  }
  if (hosts < 1) return InvalidArgument("the number of hosts must be at least 1, found {}", hosts);
  if (hosts > kMaxHosts) {
    return InvalidArgument("{} hosts is more than this tool supports ({})", hosts, kMaxHosts);
  }
  HostSpec host = preset->host;
  if (name == "local") {
    host.devices = devices_per_host.value_or(HardwareThreads());
    if (host.devices > kMaxLocalDevices) {
      return InvalidArgument("local: {} devices per host is more than this tool supports ({})",
                             host.devices, kMaxLocalDevices);
    }
    // Each device gets its share of the machine's memory.
    if (host.devices >= 1) {
      host.device.memory_bytes =
          std::max<int64_t>(1, PhysicalMemoryBytes() / (hosts * host.devices));
    }
  } else if (devices_per_host.has_value()) {
    if (*devices_per_host > host.devices) {
      return InvalidArgument("a {} host has {} devices; ask for at most {}", name, host.devices,
                             host.devices);
    }
    host.devices = *devices_per_host;
  }
  if (host.devices < 1) {
    return InvalidArgument("the number of devices per host must be at least 1, found {}",
                           host.devices);
  }
  ClusterSpec spec;
  spec.name = name;
  spec.note = preset->note;
  spec.hosts.assign(hosts, host);
  spec.inter_host = preset->inter_host;
  ALPA_RETURN_IF_ERROR(ValidateClusterSpec(spec));
  return spec;
}

Result<ClusterSpec> ParseClusterArgument(const std::string& argument) {
  if (argument.empty()) {
    return InvalidArgument("empty cluster; give a preset ({}) or a cluster file (FILE.json)",
                           PresetNames());
  }
  const size_t colon = argument.find(':');
  const std::string name = argument.substr(0, colon);
  if (!PresetHostOf(name).has_value()) {
    std::error_code error;
    if (std::filesystem::exists(argument, error) || argument.ends_with(".json") ||
        argument.ends_with(".json.gz")) {
      return LoadClusterFile(argument);
    }
    return MakePresetCluster(name, 1, std::nullopt).status().WithContext(argument);
  }
  if (colon == std::string::npos) return MakePresetCluster(name, 1, std::nullopt);

  const std::string shape = argument.substr(colon + 1);
  const size_t x = shape.find('x');
  std::optional<int64_t> first = ParseCount(shape.substr(0, x));
  std::optional<int64_t> second;
  if (x != std::string::npos) second = ParseCount(shape.substr(x + 1));
  if (!first.has_value() || (x != std::string::npos && !second.has_value())) {
    return InvalidArgument(
        "{}: expected PRESET:HOSTS or PRESET:HOSTSxDEVICES after the preset, e.g. p3.16xlarge:2, "
        "v100-32gb:1x4 or local:4",
        argument);
  }
  Result<ClusterSpec> spec =
      name == "local" && x == std::string::npos
          ? MakePresetCluster(name, 1, *first)  // local:N is N devices on this one host
          : MakePresetCluster(name, *first, second);
  if (!spec.ok()) return spec.status().WithContext(argument);
  spec->name = argument;
  return spec;
}

}  // namespace alpa::cluster
