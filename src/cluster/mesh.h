// Physical and logical device meshes.
//
// A physical mesh is a set of devices of a cluster (global device ids, numbered host by host, see
// cluster_spec.h). A logical mesh is an N-D view of one: a shape whose product is the number of
// devices, the devices in row-major order over the shape, and per axis the link its collectives
// use. Following Alpa, a (hosts, devices per host) 2-D mesh made of whole hosts has axis 0 across
// hosts and axis 1 within a host: the device order is host-major.
//
// An axis's groups are the sets of devices whose coordinates differ only along that axis (the
// replica groups of a collective over it). An axis's link is the slowest level any of its groups
// crosses: inside one host, across hosts, or across racks.
#ifndef ALPA_CLUSTER_MESH_H_
#define ALPA_CLUSTER_MESH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_spec.h"
#include "support/status.h"

namespace alpa::cluster {

struct PhysicalMesh {
  std::vector<int64_t> devices;  // global device ids, in mesh order
  std::vector<int64_t> hosts;    // the host of each device

  int64_t size() const { return static_cast<int64_t>(devices.size()); }
  friend bool operator==(const PhysicalMesh&, const PhysicalMesh&) = default;
};

// Every device of the cluster, host by host.
PhysicalMesh WholeClusterMesh(const ClusterSpec& spec);
// The listed devices, in that order. Errors: no devices, an id out of range, an id twice.
Result<PhysicalMesh> MakePhysicalMesh(const ClusterSpec& spec, const std::vector<int64_t>& devices);
// `device_count` devices from device `first_device_of_host` of `host`, then `hosts - 1` more
// whole hosts (for `hosts` > 1 the devices of each host are all taken: Alpa's (k, M) sub-meshes).
Result<PhysicalMesh> HostBlockMesh(const ClusterSpec& spec, int64_t first_host, int64_t hosts,
                                   int64_t devices_per_host);

enum class LinkLevel { kIntraHost, kInterHost, kInterRack };
std::string_view LinkLevelName(LinkLevel level);  // "intra-host", "inter-host", "inter-rack"

struct AxisLink {
  LinkLevel level = LinkLevel::kIntraHost;
  // The link's figures: per device inside a host (the slowest of the hosts involved), per host
  // across hosts, per rack across racks.
  double bandwidth = 0;
  double latency = 0;
  // How many devices send over one host's (rack's) link at once when every group of the axis runs
  // its collective together: 1 inside a host; across hosts, the mesh's devices on the busiest
  // host. bandwidth / sharing is what one device gets.
  int64_t sharing = 1;

  double PerDeviceBandwidth() const { return bandwidth / static_cast<double>(sharing); }
  friend bool operator==(const AxisLink&, const AxisLink&) = default;
};

struct LogicalMesh {
  std::vector<int64_t> shape;
  std::vector<int64_t> devices;  // global ids, row-major over `shape`
  std::vector<AxisLink> axes;    // one per dimension of `shape`

  int64_t size() const { return static_cast<int64_t>(devices.size()); }
  friend bool operator==(const LogicalMesh&, const LogicalMesh&) = default;
};

// The logical view of `physical` with `shape` (rank >= 1), devices in the physical mesh's order.
// Error when a dimension is below 1 or the shape does not tile the devices (its product differs
// from their number).
Result<LogicalMesh> MakeLogicalMesh(const ClusterSpec& spec, const PhysicalMesh& physical,
                                    const std::vector<int64_t>& shape);

// "[2,8]".
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_MESH_H_
