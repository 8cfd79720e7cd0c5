#include "cluster/link.h"

#include <array>
#include <utility>

namespace alpa::cluster {
namespace {

constexpr std::array<std::pair<Topology, std::string_view>, 5> kNames = {{
    {Topology::kAllToAll, "all_to_all"},
    {Topology::kSwitch, "switch"},
    {Topology::kCubeMesh, "cube_mesh"},
    {Topology::kRing, "ring"},
    {Topology::kPcie, "pcie"},
}};

}  // namespace

std::string_view TopologyName(Topology topology) {
  for (const auto& [value, name] : kNames) {
    if (value == topology) return name;
  }
  return "unknown";
}

std::optional<Topology> ParseTopology(std::string_view name) {
  for (const auto& [value, spelling] : kNames) {
    if (spelling == name) return value;
  }
  return std::nullopt;
}

LinkFigures Link::For(std::string_view name) const {
  const auto found = collectives.find(name);
  return found != collectives.end() ? found->second : LinkFigures{bandwidth, latency};
}

}  // namespace alpa::cluster
