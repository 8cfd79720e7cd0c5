#include "spmd/cross_mesh.h"

#include <algorithm>
#include <map>
#include <utility>

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

}  // namespace

Result<CrossMeshPlan> PlanCrossMeshTransfer(const ir::Shape& global, const MeshPlacement& from,
                                            const MeshPlacement& to) {
  ir::Shape from_local, to_local;
  ALPA_RETURN_IF_ERROR(CheckPlacement(global, from, "from", from_local));
  ALPA_RETURN_IF_ERROR(CheckPlacement(global, to, "to", to_local));

  // Source tiles: (box start, partial coordinates) -> the devices holding it, ascending.
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, std::vector<int64_t>> tiles;
  for (int64_t device = 0; device < DeviceCount(from.mesh_shape); ++device) {
    tiles[{BoxOf(from_local, from, device).start, PartialCoordinates(from, device)}].push_back(
        device);
  }

  CrossMeshPlan plan;
  const int64_t element_bytes = ir::DTypeByteSize(global.dtype());
  for (int64_t target = 0; target < DeviceCount(to.mesh_shape); ++target) {
    const std::vector<int64_t> partial = PartialCoordinates(to, target);
    if (std::any_of(partial.begin(), partial.end(), [](int64_t c) { return c != 0; })) continue;
    const Box want = BoxOf(to_local, to, target);
    for (const auto& [key, holders] : tiles) {
      const std::vector<int64_t>& have_start = key.first;
      TilePiece piece;
      bool meets = true;
      for (size_t d = 0; d < want.start.size() && meets; ++d) {
        const int64_t lo = std::max(want.start[d], have_start[d]);
        const int64_t hi =
            std::min(want.start[d] + want.sizes[d], have_start[d] + from_local.dims()[d]);
        meets = lo < hi;
        piece.source_start.push_back(lo - have_start[d]);
        piece.target_start.push_back(lo - want.start[d]);
        piece.sizes.push_back(hi - lo);
      }
      if (!meets) continue;
      piece.source = holders[static_cast<size_t>(target) % holders.size()];
      piece.target = target;
      // Prefer a holder on the receiver's own device: a local copy moves nothing.
      for (int64_t holder : holders) {
        if (from.devices[static_cast<size_t>(holder)] == to.devices[static_cast<size_t>(target)]) {
          piece.source = holder;
        }
      }
      if (from.devices[static_cast<size_t>(piece.source)] !=
          to.devices[static_cast<size_t>(target)]) {
        int64_t elements = 1;
        for (int64_t size : piece.sizes) elements *= size;
        plan.bytes_between_devices += elements * element_bytes;
      }
      plan.pieces.push_back(std::move(piece));
    }
  }
  return plan;
}

}  // namespace alpa::spmd
