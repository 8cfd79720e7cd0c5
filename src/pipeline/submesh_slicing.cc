#include "pipeline/submesh_slicing.h"

#include <algorithm>
#include <numeric>

namespace alpa::pipeline {
namespace {

int64_t Size(const SubmeshShape& shape) { return shape.num_hosts * shape.devices_per_host; }

Status CheckShapes(int64_t num_hosts, int64_t devices_per_host,
                   const std::vector<SubmeshShape>& shapes) {
  if (num_hosts < 1 || devices_per_host < 1) {
    return InvalidArgument("the cluster is {} hosts x {} devices: both need >= 1", num_hosts,
                           devices_per_host);
  }
  int64_t total = 0;
  for (size_t s = 0; s < shapes.size(); ++s) {
    const SubmeshShape& shape = shapes[s];
    if (shape.num_hosts < 1 || shape.devices_per_host < 1) {
      return InvalidArgument("stage {} has shape ({}, {}): both dimensions need >= 1", s,
                             shape.num_hosts, shape.devices_per_host);
    }
    if (shape.devices_per_host > devices_per_host ||
        (shape.num_hosts > 1 && shape.devices_per_host != devices_per_host)) {
      return InvalidArgument(
          "stage {} has shape ({}, {}): needs whole hosts (k, {}) or part of one host (1, m <= {})",
          s, shape.num_hosts, shape.devices_per_host, devices_per_host, devices_per_host);
    }
    total += Size(shape);
  }
  if (total != num_hosts * devices_per_host) {
    return InvalidArgument(
        "the stages' sub-meshes have {} devices in all, the cluster {} ({} x {})", total,
        num_hosts * devices_per_host, num_hosts, devices_per_host);
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> SliceSubmeshes(int64_t num_hosts,
                                                         int64_t devices_per_host,
                                                         const std::vector<SubmeshShape>& shapes) {
  ALPA_RETURN_IF_ERROR(CheckShapes(num_hosts, devices_per_host, shapes));
  std::vector<size_t> order(shapes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Size(shapes[a]) > Size(shapes[b]); });
  std::vector<std::vector<int64_t>> devices(shapes.size());
  int64_t host = 0;    // the next host with room
  int64_t device = 0;  // its first free device
  for (size_t s : order) {
    const SubmeshShape& shape = shapes[s];
    // Largest first, so whole-host shapes come first and (sizes adding up) always fit; only the
    // packing of sub-host shapes can fail.
    if (device + shape.devices_per_host > devices_per_host) {
      return InvalidArgument(
          "stage {} (1 host x {} devices) does not fit: host {} has {} free devices and {} whole "
          "hosts follow; the sub-host stages do not pack the hosts exactly",
          s, shape.devices_per_host, host, devices_per_host - device, num_hosts - host - 1);
    }
    for (int64_t h = host; h < host + shape.num_hosts; ++h) {
      for (int64_t j = device; j < device + shape.devices_per_host; ++j) {
        devices[s].push_back(h * devices_per_host + j);
      }
    }
    device += shape.devices_per_host;
    host += shape.num_hosts - 1;
    if (device == devices_per_host) {
      ++host;
      device = 0;
    }
  }
  return devices;
}

}  // namespace alpa::pipeline
