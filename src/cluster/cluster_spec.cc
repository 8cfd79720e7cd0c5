#include "cluster/cluster_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace alpa::cluster {

Status ValidateLink(const Link& link, const std::string& path) {
  auto check = [](const LinkFigures& figures, const std::string& at) -> Status {
    if (!std::isfinite(figures.bandwidth) || figures.bandwidth <= 0) {
      return InvalidArgument(
          "{}.bandwidth: must be a positive number of bytes per second, found {}", at,
          figures.bandwidth);
    }
    if (!std::isfinite(figures.latency) || figures.latency < 0) {
      return InvalidArgument("{}.latency: must be a non-negative number of seconds, found {}", at,
                             figures.latency);
    }
    return Status::Ok();
  };
  ALPA_RETURN_IF_ERROR(check({link.bandwidth, link.latency}, path));
  for (const auto& [name, figures] : link.collectives) {
    if (std::find(kCollectiveNames.begin(), kCollectiveNames.end(), name) ==
        kCollectiveNames.end()) {
      return InvalidArgument("{}.collectives: unknown collective '{}'; expected one of {}", path,
                             name, fmt::join(kCollectiveNames, ", "));
    }
    ALPA_RETURN_IF_ERROR(check(figures, fmt::format("{}.collectives.{}", path, name)));
  }
  return Status::Ok();
}

Status ValidateDeviceSpec(const DeviceSpec& device) {
  if (device.name.empty()) return InvalidArgument("device_types: a device type has no name");
  if (device.memory_bytes <= 0) {
    return InvalidArgument("device_types.{}.memory_bytes: must be at least 1, found {}",
                           device.name, device.memory_bytes);
  }
  if (!std::isfinite(device.memory_bandwidth) || device.memory_bandwidth <= 0) {
    return InvalidArgument(
        "device_types.{}.memory_bandwidth: must be a positive number of bytes per second, found {}",
        device.name, device.memory_bandwidth);
  }
  if (!std::isfinite(device.kernel_launch_s) || device.kernel_launch_s < 0) {
    return InvalidArgument(
        "device_types.{}.kernel_launch: must be a non-negative number of seconds, found {}",
        device.name, device.kernel_launch_s);
  }
  if (device.peak_flops.empty()) {
    return InvalidArgument("device_types.{}.peak_flops: must give at least one dtype", device.name);
  }
  for (const auto& [dtype, flops] : device.peak_flops) {
    if (!std::isfinite(flops) || flops < 0) {
      return InvalidArgument(
          "device_types.{}.peak_flops.{}: must be a non-negative FLOP/s, found {}", device.name,
          dtype, flops);
    }
  }
  return Status::Ok();
}

Status ValidateClusterSpec(const ClusterSpec& spec) {
  if (spec.hosts.empty()) return InvalidArgument("hosts: the cluster has no hosts");
  std::map<std::string, const DeviceSpec*> devices_by_name;
  for (size_t i = 0; i < spec.hosts.size(); ++i) {
    const HostSpec& host = spec.hosts[i];
    const std::string path = fmt::format("hosts[{}]", i);
    if (host.devices < 1) {
      return InvalidArgument("{}.devices: must be at least 1, found {}", path, host.devices);
    }
    ALPA_RETURN_IF_ERROR(ValidateDeviceSpec(host.device));
    auto [it, inserted] = devices_by_name.emplace(host.device.name, &host.device);
    if (!inserted && !(*it->second == host.device)) {
      return InvalidArgument(
          "{}.device_type: two device types are named '{}' with different figures; give them "
          "different names",
          path, host.device.name);
    }
    ALPA_RETURN_IF_ERROR(ValidateLink(host.intra_host, path + ".intra_host"));
  }
  ALPA_RETURN_IF_ERROR(ValidateLink(spec.inter_host, "inter_host"));
  if (spec.racks.has_value()) {
    const int64_t per_rack = spec.racks->hosts_per_rack;
    const int64_t hosts = static_cast<int64_t>(spec.hosts.size());
    if (per_rack < 1) {
      return InvalidArgument("racks.hosts_per_rack: must be at least 1, found {}", per_rack);
    }
    if (hosts % per_rack != 0) {
      return InvalidArgument(
          "racks.hosts_per_rack: {} does not divide the {} hosts; racks must be whole", per_rack,
          hosts);
    }
    ALPA_RETURN_IF_ERROR(ValidateLink(spec.racks->inter_rack, "racks.inter_rack"));
  }
  return Status::Ok();
}

int64_t TotalDevices(const ClusterSpec& spec) {
  int64_t total = 0;
  for (const HostSpec& host : spec.hosts) total += host.devices;
  return total;
}

std::vector<int64_t> HostOfDevices(const ClusterSpec& spec) {
  std::vector<int64_t> hosts;
  for (size_t h = 0; h < spec.hosts.size(); ++h) {
    hosts.insert(hosts.end(), spec.hosts[h].devices, static_cast<int64_t>(h));
  }
  return hosts;
}

std::vector<int64_t> FirstDeviceOfHosts(const ClusterSpec& spec) {
  std::vector<int64_t> first;
  int64_t next = 0;
  for (const HostSpec& host : spec.hosts) {
    first.push_back(next);
    next += host.devices;
  }
  return first;
}

int64_t RackOfHost(const ClusterSpec& spec, int64_t host) {
  if (!spec.racks.has_value() || spec.racks->hosts_per_rack < 1) return 0;
  return host / spec.racks->hosts_per_rack;
}

double AggregatePeakFlops(const ClusterSpec& spec, const std::string& dtype) {
  double total = 0;
  for (const HostSpec& host : spec.hosts) {
    total += static_cast<double>(host.devices) * host.device.PeakFlops(dtype);
  }
  return total;
}

int64_t AggregateMemoryBytes(const ClusterSpec& spec) {
  int64_t total = 0;
  for (const HostSpec& host : spec.hosts) total += host.devices * host.device.memory_bytes;
  return total;
}

bool IsHomogeneous(const ClusterSpec& spec) {
  for (const HostSpec& host : spec.hosts) {
    if (!(host == spec.hosts.front())) return false;
  }
  return true;
}

ClusterSpec WithDeviceMemory(ClusterSpec spec, int64_t bytes) {
  for (HostSpec& host : spec.hosts) host.device.memory_bytes = bytes;
  return spec;
}

ClusterSpec WithoutDevice(ClusterSpec spec, int64_t device) {
  const auto host = static_cast<size_t>(HostOfDevices(spec)[static_cast<size_t>(device)]);
  if (--spec.hosts[host].devices == 0) {
    spec.hosts.erase(spec.hosts.begin() + static_cast<std::ptrdiff_t>(host));
  }
  const auto hosts = static_cast<int64_t>(spec.hosts.size());
  if (spec.racks && (hosts % spec.racks->hosts_per_rack != 0 || hosts == 0)) spec.racks.reset();
  return spec;
}

}  // namespace alpa::cluster
