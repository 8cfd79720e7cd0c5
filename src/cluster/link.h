// A communication link between devices (inside a host), hosts, or racks: a bandwidth, a latency
// and, inside a host, a topology. Used by the alpha-beta collective cost (cost layer): a message of
// n bytes takes latency + n / bandwidth.
#ifndef ALPA_CLUSTER_LINK_H_
#define ALPA_CLUSTER_LINK_H_

#include <array>
#include <functional>
#include <map>
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

// The collectives a link can carry figures of its own for (Link::collectives), by their names in
// cost/collective_cost.h.
inline constexpr std::array<std::string_view, 7> kCollectiveNames = {
    "all-reduce", "all-gather", "reduce-scatter",    "all-to-all",
    "broadcast",  "send-recv",  "collective-permute"};

// A link's bandwidth and latency as one collective sees them (units as Link's).
struct LinkFigures {
  double bandwidth = 0;
  double latency = 0;

  friend bool operator==(const LinkFigures&, const LinkFigures&) = default;
};

struct Link {
  // Bytes per second in one direction. Inside a host: what one device can send (the sum over its
  // links); between hosts: what one host can send (the sum over its NICs); between racks: what one
  // rack can send. 25 Gbps = 25e9 / 8 = 3.125e9 B/s.
  double bandwidth = 0;
  double latency = 0;                     // seconds, for one message
  Topology topology = Topology::kSwitch;  // meaningful inside a host only
  // Inside a host, figures measured for some collectives (by name, kCollectiveNames), which those
  // collectives see in place of the two above. runtime::ApplyProfile sets one per kind it
  // measured: the in-process engine's threads do not run every kind at the speed that kind's
  // formula (cost/collective_cost.h) gives from one pair of figures.
  std::map<std::string, LinkFigures, std::less<>> collectives;

  // What the collective named `name` sees: its own figures, or the link's.
  LinkFigures For(std::string_view name) const;

  friend bool operator==(const Link&, const Link&) = default;
};

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_LINK_H_
