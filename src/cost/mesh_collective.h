// The collective group of a logical mesh's axes: which link levels a collective over those axes
// crosses, as collective_cost.h prices them.
//
//   Result<CollectiveGroup> group = MeshAxesGroup(spec, mesh, {1});   // axis 1 of a (2, 8) mesh
//   Result<CollectiveCost> cost = EstimateCollective(CollectiveKind::kAllReduce, bytes, *group);
//
// The group is the replica group holding the mesh's first device: the devices whose coordinates
// differ from it only along `axes`. Its levels, innermost first:
//   devices  m = its devices per host, over the hosts' intra-host link (the slowest of the hosts
//            it touches), and for each collective kind some of those links have figures of
//            their own for (cluster::Link::collectives), the slowest of those as the kind's;
//   hosts    h = its hosts per rack, over the inter-host network. Every group of the mesh runs its
//            collective at once, so a host's NIC is shared by all the mesh's devices on that host,
//            not only this group's: the level's bandwidth is NIC * m / (mesh devices per host);
//   racks    r = its racks, over the inter-rack link, shared likewise by the rack's mesh devices.
// A group whose hosts hold different numbers of its devices is priced with the largest count
// (the slowest member sets the pace of a ring).
#ifndef ALPA_COST_MESH_COLLECTIVE_H_
#define ALPA_COST_MESH_COLLECTIVE_H_

#include <cstdint>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "cost/collective_cost.h"
#include "support/status.h"

namespace alpa::cost {

// Errors: an axis out of range or listed twice.
Result<CollectiveGroup> MeshAxesGroup(const cluster::ClusterSpec& spec,
                                      const cluster::LogicalMesh& mesh,
                                      const std::vector<int64_t>& axes);

}  // namespace alpa::cost

#endif  // ALPA_COST_MESH_COLLECTIVE_H_
