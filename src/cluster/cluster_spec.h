// The cluster a plan is made for: hosts, each with a number of devices of one type and an
// intra-host link, an inter-host network and, optionally, a third level (racks). Plain data;
// heterogeneous clusters (hosts with different device types or counts) are a list of hosts that
// differ. The JSON file format is in cluster_json.h, the presets and the `--cluster` argument in
// presets.h.
//
// Devices are numbered host by host: host 0 has devices 0..n0-1, host 1 the next n1, and so on.
// Hosts are grouped into racks in order: rack r holds hosts r*H .. r*H+H-1 (H = hosts_per_rack).
#ifndef ALPA_CLUSTER_CLUSTER_SPEC_H_
#define ALPA_CLUSTER_CLUSTER_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/device.h"
#include "cluster/link.h"
#include "support/status.h"

namespace alpa::cluster {

struct HostSpec {
  DeviceSpec device;
  int64_t devices = 0;  // at least 1
  Link intra_host;      // bandwidth per device, per direction

  friend bool operator==(const HostSpec&, const HostSpec&) = default;
};

struct RackSpec {
  int64_t hosts_per_rack = 0;  // divides the number of hosts
  Link inter_rack;             // bandwidth per rack, per direction

  friend bool operator==(const RackSpec&, const RackSpec&) = default;
};

struct ClusterSpec {
  std::string name;  // e.g. "p3.16xlarge"
  // Where the figures come from when it is not a datasheet, e.g. "figures: estimated, not
  // profiled" for `local`; empty otherwise.
  std::string note;
  std::vector<HostSpec> hosts;  // one entry per host
  Link inter_host;              // bandwidth per host, per direction
  std::optional<RackSpec> racks;

  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

// Checks what every consumer relies on: at least one host, at least one device per host, positive
// bandwidths and memory, non-negative latencies and FLOP/s, one set of figures per device type
// name, racks that divide the hosts. Messages name the field as the JSON file spells it
// ("hosts[1].devices: must be at least 1").
Status ValidateClusterSpec(const ClusterSpec& spec);
// The parts of it, for readers that know a better place to name: `path` is the link's JSON path
// ("hosts[2].intra_host"); a device's errors name it "device_types.NAME".
Status ValidateLink(const Link& link, const std::string& path);
Status ValidateDeviceSpec(const DeviceSpec& device);

int64_t TotalDevices(const ClusterSpec& spec);
// The host of each device (devices numbered host by host), and the first device of each host.
std::vector<int64_t> HostOfDevices(const ClusterSpec& spec);
std::vector<int64_t> FirstDeviceOfHosts(const ClusterSpec& spec);
// The rack of `host` (0 when the spec declares no racks).
int64_t RackOfHost(const ClusterSpec& spec, int64_t host);
// Sum over all devices of their peak FLOP/s for `dtype`.
double AggregatePeakFlops(const ClusterSpec& spec, const std::string& dtype);
int64_t AggregateMemoryBytes(const ClusterSpec& spec);
// True when every host has the same device type, device count and intra-host link.
bool IsHomogeneous(const ClusterSpec& spec);

// `spec` with every device's memory replaced by `bytes` (positive): the memory a plan may use
// per device (`alpa plan --memory-budget`). Below the device's, it leaves room for what the
// memory model does not count (kernel workspaces, the allocator's fragmentation); above it, it
// asks what a larger device would allow.
ClusterSpec WithDeviceMemory(ClusterSpec spec, int64_t bytes);

// `spec` without device `device` (a lost one, for re-planning on the devices left): its host has
// one device less, and is gone when it had one; the racks are dropped when they no longer divide
// the hosts. `device` must be below TotalDevices(spec), which must be at least 2.
ClusterSpec WithoutDevice(ClusterSpec spec, int64_t device);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_CLUSTER_SPEC_H_
