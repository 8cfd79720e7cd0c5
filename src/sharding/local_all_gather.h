// Alpa's local all-gather (Alpa section 5; Zhuang et al., MLSys'23): the route a value takes from
// one mesh into another that holds it replicated. spmd/cross_mesh.h runs it; the planner prices
// it here, so that what a pipeline's plan charges for a stage boundary is what the runtime moves.
//
// The receivers of one tile are its replicas: the devices with the same box, which differ only on
// the mesh axes the receiving layout neither splits a dimension over nor sums over (k = the
// product of those axes' sizes). Sending each replica its whole tile moves k copies between the
// meshes; the route cuts the tile into k chunks, sends chunk c to replica c, and then each
// replica hands its chunk to the other k - 1 inside the receiving mesh. For a value of B bytes
// that its sender holds as a sum of p terms (p = 1 for a whole value; each term is sent, and the
// receiver adds them up before handing its chunk on):
//   between the meshes    p x B              (p x k x B when sent to every replica)
//   within the receiver   (k - 1) x B        (every tile's replicas gather their chunks)
//   time of the gather    an all-gather of one tile over the replicated axes, every tile's
//                         group at once (cost/collective_cost.h, cost/mesh_collective.h)
// The chunks are cut along the tile's longest dimension that k divides (equal chunks), else its
// longest of at least k rows (the first n mod k chunks one row longer: 8 rows to 3 replicas are 3,
// 3 and 2); a tile with no dimension of k rows is sent whole to every replica.
#ifndef ALPA_SHARDING_LOCAL_ALL_GATHER_H_
#define ALPA_SHARDING_LOCAL_ALL_GATHER_H_

#include <cstdint>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/mesh.h"
#include "ir/shape.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::sharding {

// The dimension to cut a tile of `tile_sizes` into `replicas` chunks along (above); -1 if none.
int64_t LocalAllGatherDimension(const std::vector<int64_t>& tile_sizes, int64_t replicas);

struct ReceivedTransfer {
  int64_t between_meshes_bytes = 0;
  int64_t within_receiver_bytes = 0;
  double gather_s = 0;
};

// A value of `shape`, a sum of `sender_terms` terms on a mesh that shares no device with `mesh`,
// received there in layout `received`, as the route above moves it. Errors: a layout that does
// not fit the shape or the mesh, or splits a dimension unevenly.
Result<ReceivedTransfer> PriceReceivedTransfer(const ir::Shape& shape, const ShardingSpec& received,
                                               const cluster::ClusterSpec& cluster,
                                               const cluster::LogicalMesh& mesh,
                                               int64_t sender_terms = 1);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_LOCAL_ALL_GATHER_H_
