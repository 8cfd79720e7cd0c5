// Cross-mesh resharding (Alpa section 5; Zhuang et al., "On Optimizing the Communication of
// Model Parallelism", MLSys'23): moving a value from its layout on one sub-mesh to its layout on
// another, the two meshes of any shapes and on any devices, as tile-to-tile transfers.
//
// Device d of a mesh holds, along dimension i split over axes A_i, the box
//   [IndexOverAxes(d, A_i) * n_i / T_i, + n_i / T_i)      (T_i = the product of A_i's sizes)
// The sending devices fall into source tiles: devices with the same box and the same coordinates
// on the partial axes hold the same values (replicas). Every receiving device that holds data
// (coordinate 0 on each of the receiver's partial axes; the others hold zeros) gets, from each
// source tile its box meets, the intersection, from one replica of that tile:
//   replica = holders[receiver position % holders]
// so replicas share the sending. Pieces are added into a zeroed tile: the pieces of a
// non-partial source tile one receiver needs do not overlap, and the pieces of a partial
// source's tiles sum to the value, in a fixed order.
//
// Alpa's local all-gather. Receivers with the same box are replicas of one receiving tile; sent
// as above, each of the k replicas gets the whole tile over the link between the meshes. The
// all-gather route sends the tile across once instead: the tile is cut into k chunks
// (sharding/local_all_gather.h says along which dimension, and prices the route for the
// planner), replica c receives chunk c from the senders, then hands it to the other replicas
// inside the receiving mesh (gather_pieces: copies, so a chunk that is a sum of several
// transfers into one tile goes on whole). It is taken
// for a group of replicas where it moves fewer bytes between the meshes than sending each its
// tile:
//   direct:  sum over replicas r of the bytes of r's pieces from other devices
//   route:   sum over chunks c of the bytes of c's pieces from other devices
// (with disjoint meshes and no pending sums, route = tile bytes, direct = k x tile bytes).
//
// bytes_between_meshes counts what crosses from a sending device to another, receiving, device:
// the transfer the planner prices between stages; bytes_within_receiver what the all-gather
// moves between the receiving devices; bytes_between_devices both (a piece whose sender is its
// receiver is a local copy and counts in neither).
#ifndef ALPA_SPMD_CROSS_MESH_H_
#define ALPA_SPMD_CROSS_MESH_H_

#include <cstdint>
#include <vector>

#include "ir/shape.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::spmd {

// A value's layout on a mesh of devices.
struct MeshPlacement {
  std::vector<int64_t> mesh_shape;
  sharding::ShardingSpec spec;
  std::vector<int64_t> devices;  // global device ids, row-major over mesh_shape
};

struct TilePiece {
  int64_t source = 0;                 // position on the sending mesh
  int64_t target = 0;                 // position on the receiving mesh
  std::vector<int64_t> source_start;  // in the sender's local tile
  std::vector<int64_t> target_start;  // in the receiver's local tile
  std::vector<int64_t> sizes;
  friend bool operator==(const TilePiece&, const TilePiece&) = default;
};

struct CrossMeshPlan {
  // From the sending mesh's positions to the receiving mesh's. Ordered by receiver position, then
  // by source tile (row-major box start, partial coordinates).
  std::vector<TilePiece> pieces;
  // Then between positions of the receiving mesh (source and target both receivers; the box is
  // at the same place in both tiles), each after its source has received its pieces.
  std::vector<TilePiece> gather_pieces;
  int64_t bytes_between_meshes = 0;
  int64_t bytes_within_receiver = 0;
  int64_t bytes_between_devices = 0;  // the sum of the two
};

struct CrossMeshOptions {
  bool local_all_gather = true;  // take the all-gather route where it moves fewer bytes
};

// Errors: a placement whose spec does not fit the array or its mesh (named `from` or `to`), a
// device list that does not match the mesh, an uneven split.
Result<CrossMeshPlan> PlanCrossMeshTransfer(const ir::Shape& global, const MeshPlacement& from,
                                            const MeshPlacement& to,
                                            const CrossMeshOptions& options = {});

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_CROSS_MESH_H_
