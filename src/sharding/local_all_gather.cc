#include "sharding/local_all_gather.h"

#include "cost/collective_cost.h"
#include "cost/mesh_collective.h"

namespace alpa::sharding {

int64_t LocalAllGatherDimension(const std::vector<int64_t>& tile_sizes, int64_t replicas) {
  auto longest = [&](auto&& admits) {
    int64_t best = -1;
    for (size_t d = 0; d < tile_sizes.size(); ++d) {
      if (admits(tile_sizes[d]) &&
          (best < 0 || tile_sizes[d] > tile_sizes[static_cast<size_t>(best)])) {
        best = static_cast<int64_t>(d);
      }
    }
    return best;
  };
  const int64_t even = longest([replicas](int64_t n) { return n % replicas == 0; });
  return even >= 0 ? even : longest([replicas](int64_t n) { return n >= replicas; });
}

Result<ReceivedTransfer> PriceReceivedTransfer(const ir::Shape& shape, const ShardingSpec& received,
                                               const cluster::ClusterSpec& cluster,
                                               const cluster::LogicalMesh& mesh,
                                               int64_t sender_terms) {
  ALPA_RETURN_IF_ERROR(CheckSpec(received, mesh.shape, shape.dims()));
  std::vector<int64_t> tile = shape.dims();
  int64_t tiles = 1;
  for (size_t d = 0; d < tile.size(); ++d) {
    for (int64_t axis : received.dim_axes[d]) {
      const int64_t parts = mesh.shape[static_cast<size_t>(axis)];
      if (tile[d] % parts != 0) {
        return InvalidArgument("the received layout {} splits dimension {} of {} unevenly",
                               ToString(received), d, shape.ToString());
      }
      tile[d] /= parts;
      tiles *= parts;
    }
  }
  const std::vector<int64_t> axes =
      received.ReplicatedAxes(static_cast<int64_t>(mesh.shape.size()));
  int64_t replicas = 1;
  for (int64_t axis : axes) replicas *= mesh.shape[static_cast<size_t>(axis)];
  const int64_t bytes = shape.ByteSize();
  ReceivedTransfer transfer;
  if (replicas == 1 || LocalAllGatherDimension(tile, replicas) < 0) {
    transfer.between_meshes_bytes = sender_terms * replicas * bytes;
    return transfer;
  }
  transfer.between_meshes_bytes = sender_terms * bytes;
  transfer.within_receiver_bytes = (replicas - 1) * bytes;
  ALPA_ASSIGN_OR_RETURN(cost::CollectiveGroup group, cost::MeshAxesGroup(cluster, mesh, axes));
  ALPA_ASSIGN_OR_RETURN(cost::CollectiveCost gather, cost::AllGatherCost(bytes / tiles, group));
  transfer.gather_s = gather.seconds;
  return transfer;
}

}  // namespace alpa::sharding
