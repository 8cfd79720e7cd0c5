#include "cost/mesh_collective.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace alpa::cost {
namespace {

// Mesh positions (row-major indices) of the group through position 0 along `axes`.
std::vector<int64_t> GroupPositions(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& axes) {
  std::vector<int64_t> positions = {0};
  for (int64_t axis : axes) {
    int64_t stride = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) stride *= shape[d];
    std::vector<int64_t> grown;
    for (int64_t position : positions) {
      for (int64_t i = 0; i < shape[static_cast<size_t>(axis)]; ++i) {
        grown.push_back(position + i * stride);
      }
    }
    positions = std::move(grown);
  }
  return positions;
}

// The largest number of `devices` that share one key (a host or a rack).
template <typename KeyOf>
int64_t MostPerKey(const std::vector<int64_t>& devices, KeyOf key_of) {
  std::map<int64_t, int64_t> count;
  int64_t most = 0;
  for (int64_t device : devices) most = std::max(most, ++count[key_of(device)]);
  return most;
}

}  // namespace

Result<CollectiveGroup> MeshAxesGroup(const cluster::ClusterSpec& spec,
                                      const cluster::LogicalMesh& mesh,
                                      const std::vector<int64_t>& axes) {
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= static_cast<int64_t>(mesh.shape.size())) {
      return InvalidArgument("axis {} is not an axis of the mesh {}", axis,
                             cluster::ShapeString(mesh.shape));
    }
    if (!seen.insert(axis).second) return InvalidArgument("axis {} is listed twice", axis);
  }
  const std::vector<int64_t> host_of = cluster::HostOfDevices(spec);
  auto host = [&](int64_t device) { return host_of[static_cast<size_t>(device)]; };
  auto rack = [&](int64_t device) { return cluster::RackOfHost(spec, host(device)); };

  std::vector<int64_t> group;
  for (int64_t position : GroupPositions(mesh.shape, axes)) {
    group.push_back(mesh.devices[static_cast<size_t>(position)]);
  }
  std::set<int64_t> hosts, racks;
  double intra_bandwidth = 0, intra_latency = 0;
  for (int64_t device : group) {
    const cluster::Link& link = spec.hosts[static_cast<size_t>(host(device))].intra_host;
    if (hosts.insert(host(device)).second) {
      intra_bandwidth =
          hosts.size() == 1 ? link.bandwidth : std::min(intra_bandwidth, link.bandwidth);
      intra_latency = std::max(intra_latency, link.latency);
    }
    racks.insert(rack(device));
  }
  const int64_t per_host = MostPerKey(group, host);
  const int64_t per_rack = MostPerKey(group, rack);
  const auto size = [](const std::set<int64_t>& set) { return static_cast<int64_t>(set.size()); };

  CollectiveGroup result;
  result.levels.push_back({per_host, intra_latency, intra_bandwidth});
  // A kind that some of the hosts' links have figures of its own for sees, as for the link's own
  // figures, the slowest of the hosts'.
  for (CollectiveKind kind : kCollectiveKinds) {
    const std::string_view name = CollectiveKindName(kind);
    bool measured = false;
    cluster::LinkFigures slowest{std::numeric_limits<double>::infinity(), 0};
    for (int64_t h : hosts) {
      const cluster::Link& link = spec.hosts[static_cast<size_t>(h)].intra_host;
      measured = measured || link.collectives.contains(name);
      const cluster::LinkFigures figures = link.For(name);
      slowest.bandwidth = std::min(slowest.bandwidth, figures.bandwidth);
      slowest.latency = std::max(slowest.latency, figures.latency);
    }
    if (measured) result.levels.front().measured[static_cast<size_t>(kind)] = slowest;
  }
  if (hosts.size() > 1) {
    // The NIC carries every group of the mesh that has devices on the host.
    const double share =
        static_cast<double>(per_host) / static_cast<double>(MostPerKey(mesh.devices, host));
    result.levels.push_back(
        {size(hosts) / size(racks), spec.inter_host.latency, spec.inter_host.bandwidth * share});
  }
  if (racks.size() > 1) {
    const double share =
        static_cast<double>(per_rack) / static_cast<double>(MostPerKey(mesh.devices, rack));
    result.levels.push_back(
        {size(racks), spec.racks->inter_rack.latency, spec.racks->inter_rack.bandwidth * share});
  }
  return result;
}

}  // namespace alpa::cost
