#include "cluster/submesh.h"

#include <algorithm>

namespace alpa::cluster {
namespace {

// The counts k >= 2 of whole units (hosts or racks) a space allows, out of `available`.
std::vector<int64_t> WholeUnitCounts(int64_t available, SubmeshSpace space) {
  std::vector<int64_t> counts;
  switch (space) {
    case SubmeshSpace::kAll:
      for (int64_t k = 2; k <= available; ++k) counts.push_back(k);
      break;
    case SubmeshSpace::kPowerOfTwo:
      for (int64_t k = 2; k <= available; k *= 2) counts.push_back(k);
      break;
    case SubmeshSpace::kSmallPowerOfTwo:
      for (int64_t k = 2; k <= std::min<int64_t>(available, 4); k *= 2) counts.push_back(k);
      break;
  }
  return counts;
}

// (1,1), (1,2), (1,4), ..., (1,M), then (k,M): 2-D shapes inside `hosts` hosts of M devices.
std::vector<std::vector<int64_t>> HostLevelShapes(int64_t hosts, int64_t devices_per_host,
                                                  SubmeshSpace space) {
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t m = 1; m <= devices_per_host; m *= 2) shapes.push_back({1, m});
  if (shapes.back()[1] != devices_per_host) shapes.push_back({1, devices_per_host});
  for (int64_t k : WholeUnitCounts(hosts, space)) shapes.push_back({k, devices_per_host});
  return shapes;
}

}  // namespace

int64_t Submesh::devices() const {
  int64_t product = 1;
  for (int64_t dim : shape) product *= dim;
  return product;
}

std::vector<HostType> HostTypes(const ClusterSpec& spec) {
  std::vector<HostType> types;
  for (int64_t h = 0; h < static_cast<int64_t>(spec.hosts.size()); ++h) {
    auto it = std::find_if(types.begin(), types.end(),
                           [&](const HostType& type) { return type.host == spec.hosts[h]; });
    if (it == types.end()) {
      types.push_back(HostType{spec.hosts[h], {h}});
    } else {
      it->hosts.push_back(h);
    }
  }
  return types;
}

std::vector<Submesh> EnumerateSubmeshes(const ClusterSpec& spec, SubmeshSpace space) {
  std::vector<Submesh> submeshes;
  const std::vector<HostType> types = HostTypes(spec);
  if (types.size() == 1 && spec.racks.has_value()) {
    const int64_t per_rack = spec.racks->hosts_per_rack;
    const int64_t racks = static_cast<int64_t>(spec.hosts.size()) / per_rack;
    const int64_t m = spec.hosts.front().devices;
    for (const std::vector<int64_t>& shape : HostLevelShapes(per_rack, m, space)) {
      submeshes.push_back(Submesh{{1, shape[0], shape[1]}, 0});
    }
    for (int64_t r : WholeUnitCounts(racks, space))
      submeshes.push_back(Submesh{{r, per_rack, m}, 0});
    return submeshes;
  }
  for (int64_t t = 0; t < static_cast<int64_t>(types.size()); ++t) {
    const int64_t hosts = static_cast<int64_t>(types[t].hosts.size());
    for (std::vector<int64_t>& shape : HostLevelShapes(hosts, types[t].host.devices, space)) {
      submeshes.push_back(Submesh{std::move(shape), t});
    }
  }
  return submeshes;
}

std::vector<Submesh> SubHostSubmeshes(const ClusterSpec& spec, int64_t width) {
  std::vector<Submesh> submeshes;
  const std::vector<HostType> types = HostTypes(spec);
  const bool racks = types.size() == 1 && spec.racks.has_value();
  for (int64_t t = 0; t < static_cast<int64_t>(types.size()); ++t) {
    if (width < 1 || width > types[static_cast<size_t>(t)].host.devices) continue;
    submeshes.push_back(
        Submesh{racks ? std::vector<int64_t>{1, 1, width} : std::vector<int64_t>{1, width}, t});
  }
  return submeshes;
}

std::vector<std::vector<int64_t>> LogicalMeshShapes(int64_t devices, int rank) {
  std::vector<std::vector<int64_t>> shapes;
  if (devices < 1 || rank < 1) return shapes;
  std::vector<int64_t> prefix;
  // Depth-first over the divisors of what is left, the last dimension taking the rest.
  auto recurse = [&](auto&& self, int64_t left) -> void {
    if (static_cast<int>(prefix.size()) == rank - 1) {
      prefix.push_back(left);
      shapes.push_back(prefix);
      prefix.pop_back();
      return;
    }
    for (int64_t d = 1; d <= left; ++d) {
      if (left % d != 0) continue;
      prefix.push_back(d);
      self(self, left / d);
      prefix.pop_back();
    }
  };
  recurse(recurse, devices);
  return shapes;
}

}  // namespace alpa::cluster
