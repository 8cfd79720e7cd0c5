// A communication link between devices (inside a host), hosts, or racks: a bandwidth, a latency
// and, inside a host, a topology. Used by the alpha-beta collective cost (cost layer): a message of
// n bytes takes latency + n / bandwidth.
#ifndef ALPA_CLUSTER_LINK_H_
#define ALPA_CLUSTER_LINK_H_

#include <optional>
#include <string>
#include <string_view>

namespace alpa::cluster {

// How the devices of a host are connected.
enum class Topology {
  kAllToAll,  // a direct link between every pair (e.g. NVLink fully connected)
  kSwitch,    // every device on one non-blocking switch (NVSwitch): any pairing at full bandwidth
  kCubeMesh,  // NVLink hybrid cube-mesh (DGX-1, p3.16xlarge): 6 links per V100, not all pairs
  kRing,      // each device linked to two neighbours
  kPcie,      // through the PCIe tree (and the CPU)
};

// "all_to_all", "switch", "cube_mesh", "ring", "pcie": the spelling of the JSON file.
std::string_view TopologyName(Topology topology);
std::optional<Topology> ParseTopology(std::string_view name);

struct Link {
  // Bytes per second in one direction. Inside a host: what one device can send (the sum over its
  // links); between hosts: what one host can send (the sum over its NICs); between racks: what one
  // rack can send. 25 Gbps = 25e9 / 8 = 3.125e9 B/s.
  double bandwidth = 0;
  double latency = 0;                     // seconds, for one message
  Topology topology = Topology::kSwitch;  // meaningful inside a host only

  friend bool operator==(const Link&, const Link&) = default;
};

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_LINK_H_
