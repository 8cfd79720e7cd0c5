#include "spmd/cross_mesh.h"

#include <algorithm>
#include <map>
#include <utility>

#include "sharding/local_all_gather.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"

namespace alpa::spmd {
namespace {

struct Box {
  std::vector<int64_t> start;
  std::vector<int64_t> sizes;
};

// The box device `device` holds (every device the same sizes: the local shape).
Box BoxOf(const ir::Shape& local, const MeshPlacement& placement, int64_t device) {
  Box box;
  box.sizes = local.dims();
  for (size_t d = 0; d < box.sizes.size(); ++d) {
    box.start.push_back(IndexOverAxes(placement.mesh_shape, device, placement.spec.dim_axes[d]) *
                        box.sizes[d]);
  }
  return box;
}

std::vector<int64_t> PartialCoordinates(const MeshPlacement& placement, int64_t device) {
  const std::vector<int64_t> coordinates = DeviceCoordinates(placement.mesh_shape, device);
  std::vector<int64_t> partial;
  for (int64_t axis : placement.spec.partial_axes) {
    partial.push_back(coordinates[static_cast<size_t>(axis)]);
  }
  return partial;
}

Status CheckPlacement(const ir::Shape& global, const MeshPlacement& placement, const char* what,
                      ir::Shape& local) {
  if (static_cast<int64_t>(placement.devices.size()) != DeviceCount(placement.mesh_shape)) {
    return InvalidArgument("{}: {} devices listed for a mesh of {}", what, placement.devices.size(),
                           DeviceCount(placement.mesh_shape));
  }
  ALPA_ASSIGN_OR_RETURN(local, LocalShape(global, placement.spec, placement.mesh_shape, what));
  return Status::Ok();
}

int64_t ElementCount(const std::vector<int64_t>& sizes) {
  int64_t elements = 1;
  for (int64_t size : sizes) elements *= size;
  return elements;
}

// The sending mesh's tiles: (box start, partial coordinates) -> the devices holding it,
// ascending (replicas).
using SourceTiles =
    std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, std::vector<int64_t>>;

class TransferPlanner {
 public:
  TransferPlanner(const ir::Shape& global, const MeshPlacement& from, const ir::Shape& from_local,
                  const MeshPlacement& to)
      : from_(from),
        from_local_(from_local),
        to_(to),
        element_bytes_(ir::DTypeByteSize(global.dtype())) {
    for (int64_t device = 0; device < DeviceCount(from.mesh_shape); ++device) {
      tiles_[{BoxOf(from_local, from, device).start, PartialCoordinates(from, device)}].push_back(
          device);
    }
  }

  // The pieces that fill `want` (a box of the global array inside `tile`, the box receiver
  // `target` holds), each from one holder of a source tile that meets it; `bytes` += those of
  // the pieces that cross between devices.
  std::vector<TilePiece> PiecesOf(const Box& want, const Box& tile, int64_t target,
                                  int64_t& bytes) const {
    std::vector<TilePiece> pieces;
    for (const auto& [key, holders] : tiles_) {
      const std::vector<int64_t>& have_start = key.first;
      TilePiece piece;
      bool meets = true;
      for (size_t d = 0; d < want.start.size() && meets; ++d) {
        const int64_t lo = std::max(want.start[d], have_start[d]);
        const int64_t hi =
            std::min(want.start[d] + want.sizes[d], have_start[d] + from_local_.dims()[d]);
        meets = lo < hi;
        piece.source_start.push_back(lo - have_start[d]);
        piece.target_start.push_back(lo - tile.start[d]);
        piece.sizes.push_back(hi - lo);
      }
      if (!meets) continue;
      piece.source = holders[static_cast<size_t>(target) % holders.size()];
      piece.target = target;
      // Prefer a holder on the receiver's own device: a local copy moves nothing.
      for (int64_t holder : holders) {
        if (SameDevice(holder, target)) piece.source = holder;
      }
      if (!SameDevice(piece.source, target)) {
        bytes += ElementCount(piece.sizes) * element_bytes_;
      }
      pieces.push_back(std::move(piece));
    }
    return pieces;
  }

  int64_t element_bytes() const { return element_bytes_; }

 private:
  bool SameDevice(int64_t source, int64_t target) const {
    return from_.devices[static_cast<size_t>(source)] == to_.devices[static_cast<size_t>(target)];
  }

  const MeshPlacement& from_;
  const ir::Shape& from_local_;
  const MeshPlacement& to_;
  int64_t element_bytes_;
  SourceTiles tiles_;
};

}  // namespace

Result<CrossMeshPlan> PlanCrossMeshTransfer(const ir::Shape& global, const MeshPlacement& from,
                                            const MeshPlacement& to,
                                            const CrossMeshOptions& options) {
  ir::Shape from_local, to_local;
  ALPA_RETURN_IF_ERROR(CheckPlacement(global, from, "from", from_local));
  ALPA_RETURN_IF_ERROR(CheckPlacement(global, to, "to", to_local));
  const TransferPlanner planner(global, from, from_local, to);

  // The receivers holding data (coordinate 0 on the partial axes), grouped by their box.
  std::map<std::vector<int64_t>, std::vector<int64_t>> replicas;
  for (int64_t target = 0; target < DeviceCount(to.mesh_shape); ++target) {
    const std::vector<int64_t> partial = PartialCoordinates(to, target);
    if (std::any_of(partial.begin(), partial.end(), [](int64_t c) { return c != 0; })) continue;
    replicas[BoxOf(to_local, to, target).start].push_back(target);
  }

  CrossMeshPlan plan;
  std::vector<std::vector<TilePiece>> by_target(static_cast<size_t>(DeviceCount(to.mesh_shape)));
  for (const auto& [start, members] : replicas) {
    const Box tile = BoxOf(to_local, to, members.front());
    int64_t direct_bytes = 0;
    std::vector<std::vector<TilePiece>> direct;
    for (int64_t target : members)
      direct.push_back(planner.PiecesOf(tile, tile, target, direct_bytes));
    const int64_t k = static_cast<int64_t>(members.size());
    const int64_t dimension = sharding::LocalAllGatherDimension(tile.sizes, k);
    int64_t route_bytes = 0;
    std::vector<std::vector<TilePiece>> route;
    std::vector<Box> chunks;
    if (options.local_all_gather && k > 1 && dimension >= 0) {
      const size_t d = static_cast<size_t>(dimension);
      int64_t offset = 0;
      for (int64_t c = 0; c < k; ++c) {
        Box chunk = tile;
        // The first n mod k chunks take one row more: 8 rows to 3 replicas are 3, 3 and 2.
        chunk.sizes[d] = tile.sizes[d] / k + (c < tile.sizes[d] % k ? 1 : 0);
        chunk.start[d] = tile.start[d] + offset;
        offset += chunk.sizes[d];
        route.push_back(
            planner.PiecesOf(chunk, tile, members[static_cast<size_t>(c)], route_bytes));
        chunks.push_back(std::move(chunk));
      }
    }
    if (route.empty() || route_bytes >= direct_bytes) {
      for (size_t r = 0; r < members.size(); ++r)
        by_target[static_cast<size_t>(members[r])] = std::move(direct[r]);
      plan.bytes_between_meshes += direct_bytes;
      continue;
    }
    plan.bytes_between_meshes += route_bytes;
    for (size_t c = 0; c < members.size(); ++c) {
      by_target[static_cast<size_t>(members[c])] = std::move(route[c]);
      std::vector<int64_t> offset;
      for (size_t d = 0; d < tile.start.size(); ++d)
        offset.push_back(chunks[c].start[d] - tile.start[d]);
      for (size_t r = 0; r < members.size(); ++r) {
        if (r == c) continue;
        plan.gather_pieces.push_back({members[c], members[r], offset, offset, chunks[c].sizes});
        plan.bytes_within_receiver += ElementCount(chunks[c].sizes) * planner.element_bytes();
      }
    }
  }
  for (std::vector<TilePiece>& pieces : by_target) {
    for (TilePiece& piece : pieces) plan.pieces.push_back(std::move(piece));
  }
  plan.bytes_between_devices = plan.bytes_between_meshes + plan.bytes_within_receiver;
  return plan;
}

}  // namespace alpa::spmd
