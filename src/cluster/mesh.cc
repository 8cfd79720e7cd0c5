#include "cluster/mesh.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace alpa::cluster {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string_view LinkLevelName(LinkLevel level) {
  switch (level) {
    case LinkLevel::kIntraHost:
      return "intra-host";
    case LinkLevel::kInterHost:
      return "inter-host";
    case LinkLevel::kInterRack:
      return "inter-rack";
  }
  return "unknown";
}

PhysicalMesh WholeClusterMesh(const ClusterSpec& spec) {
  PhysicalMesh mesh;
  mesh.hosts = HostOfDevices(spec);
  for (int64_t d = 0; d < static_cast<int64_t>(mesh.hosts.size()); ++d) mesh.devices.push_back(d);
  return mesh;
}

Result<PhysicalMesh> MakePhysicalMesh(const ClusterSpec& spec,
                                      const std::vector<int64_t>& devices) {
  if (devices.empty()) return InvalidArgument("a physical mesh needs at least one device");
  const std::vector<int64_t> host_of = HostOfDevices(spec);
  std::set<int64_t> seen;
  PhysicalMesh mesh;
  for (int64_t device : devices) {
    if (device < 0 || device >= static_cast<int64_t>(host_of.size())) {
      return InvalidArgument("device {} does not exist: the cluster has devices 0 to {}", device,
                             static_cast<int64_t>(host_of.size()) - 1);
    }
    if (!seen.insert(device).second) {
      return InvalidArgument("device {} is listed twice in the mesh", device);
    }
    mesh.devices.push_back(device);
    mesh.hosts.push_back(host_of[device]);
  }
  return mesh;
}

Result<PhysicalMesh> HostBlockMesh(const ClusterSpec& spec, int64_t first_host, int64_t hosts,
                                   int64_t devices_per_host) {
  const int64_t host_count = static_cast<int64_t>(spec.hosts.size());
  if (first_host < 0 || hosts < 1 || first_host + hosts > host_count) {
    return InvalidArgument("hosts {} to {} do not exist: the cluster has {} hosts", first_host,
                           first_host + hosts - 1, host_count);
  }
  const std::vector<int64_t> first_device = FirstDeviceOfHosts(spec);
  std::vector<int64_t> devices;
  for (int64_t h = first_host; h < first_host + hosts; ++h) {
    if (devices_per_host < 1 || devices_per_host > spec.hosts[h].devices) {
      return InvalidArgument("host {} has {} devices; cannot take {}", h, spec.hosts[h].devices,
                             devices_per_host);
    }
    for (int64_t d = 0; d < devices_per_host; ++d) devices.push_back(first_device[h] + d);
  }
  return MakePhysicalMesh(spec, devices);
}

Result<LogicalMesh> MakeLogicalMesh(const ClusterSpec& spec, const PhysicalMesh& physical,
                                    const std::vector<int64_t>& shape) {
  if (shape.empty()) return InvalidArgument("a logical mesh shape needs at least one dimension");
  int64_t product = 1;
  for (int64_t dim : shape) {
    if (dim < 1) {
      return InvalidArgument("mesh shape {}: every dimension must be at least 1",
                             ShapeString(shape));
    }
    if (product > std::numeric_limits<int64_t>::max() / dim) {
      return InvalidArgument("mesh shape {} is too large", ShapeString(shape));
    }
    product *= dim;
  }
  if (product != physical.size()) {
    return InvalidArgument("mesh shape {} ({} devices) does not tile the {} devices of the mesh",
                           ShapeString(shape), product, physical.size());
  }
  LogicalMesh mesh;
  mesh.shape = shape;
  mesh.devices = physical.devices;

  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> strides(rank, 1);
  for (int64_t a = rank - 2; a >= 0; --a) strides[a] = strides[a + 1] * shape[a + 1];

  for (int64_t axis = 0; axis < rank; ++axis) {
    // Walk every group of the axis: positions whose coordinate along `axis` is 0 start one.
    bool crosses_hosts = false;
    bool crosses_racks = false;
    double intra_bandwidth = std::numeric_limits<double>::infinity();
    double intra_latency = 0;
    for (int64_t start = 0; start < physical.size(); ++start) {
      if ((start / strides[axis]) % shape[axis] != 0) continue;
      const int64_t host0 = physical.hosts[start];
      for (int64_t k = 0; k < shape[axis]; ++k) {
        const int64_t host = physical.hosts[start + k * strides[axis]];
        crosses_hosts = crosses_hosts || host != host0;
        crosses_racks = crosses_racks || RackOfHost(spec, host) != RackOfHost(spec, host0);
        intra_bandwidth = std::min(intra_bandwidth, spec.hosts[host].intra_host.bandwidth);
        intra_latency = std::max(intra_latency, spec.hosts[host].intra_host.latency);
      }
    }
    AxisLink link;
    if (crosses_racks) {
      link = {LinkLevel::kInterRack, spec.racks->inter_rack.bandwidth,
              spec.racks->inter_rack.latency, 1};
    } else if (crosses_hosts) {
      link = {LinkLevel::kInterHost, spec.inter_host.bandwidth, spec.inter_host.latency, 1};
    } else {
      link = {LinkLevel::kIntraHost, intra_bandwidth, intra_latency, 1};
    }
    if (shape[axis] > 1 && link.level != LinkLevel::kIntraHost) {
      // Every device of the mesh takes part in one group of the axis; across hosts (racks) the
      // devices of one host (rack) share its link.
      std::map<int64_t, int64_t> per_unit;
      for (int64_t host : physical.hosts) {
        const int64_t unit = link.level == LinkLevel::kInterRack ? RackOfHost(spec, host) : host;
        link.sharing = std::max(link.sharing, ++per_unit[unit]);
      }
    }
    mesh.axes.push_back(link);
  }
  return mesh;
}

}  // namespace alpa::cluster
