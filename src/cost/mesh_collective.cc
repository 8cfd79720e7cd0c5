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
  for (int64_t device : group) {
    hosts.insert(host(device));
    racks.insert(rack(device));
  }
  // The slowest of the figures `figures_of` gives each host's intra-host link: the least
  // bandwidth and the most latency (the slowest member sets the pace of a ring).
  auto slowest = [&](auto figures_of) {
    cluster::LinkFigures result{std::numeric_limits<double>::infinity(), 0};
    for (int64_t h : hosts) {
      const cluster::LinkFigures figures =
          figures_of(spec.hosts[static_cast<size_t>(h)].intra_host);
      result.bandwidth = std::min(result.bandwidth, figures.bandwidth);
      result.latency = std::max(result.latency, figures.latency);
    }
    return result;
  };
  const int64_t per_host = MostPerKey(group, host);
  const int64_t per_rack = MostPerKey(group, rack);
  const auto size = [](const std::set<int64_t>& set) { return static_cast<int64_t>(set.size()); };

  CollectiveGroup result;
  const cluster::LinkFigures intra = slowest([](const cluster::Link& link) {
    return cluster::LinkFigures{link.bandwidth, link.latency};
  });
  result.levels.push_back({per_host, intra.latency, intra.bandwidth});
  // A kind that some of the hosts' links have figures of its own for sees the slowest of each
  // host's figures for it (its own, or the link's).
  for (CollectiveKind kind : kCollectiveKinds) {
    const std::string_view name = CollectiveKindName(kind);
    const bool measured = std::any_of(hosts.begin(), hosts.end(), [&](int64_t h) {
      return spec.hosts[static_cast<size_t>(h)].intra_host.collectives.contains(name);
    });
    if (!measured) continue;
    result.levels.front().measured[static_cast<size_t>(kind)] =
        slowest([name](const cluster::Link& link) { return link.For(name); });
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
