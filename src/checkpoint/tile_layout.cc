#include "checkpoint/tile_layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"

namespace alpa::checkpoint {

int64_t TileRegion::ElementCount() const {
  int64_t count = 1;
  for (int64_t n : extent) count *= n;
  return count;
}

Result<TileRegion> DeviceRegion(const std::vector<int64_t>& dims,
                                const sharding::ShardingSpec& spec,
                                const std::vector<int64_t>& mesh_shape, int64_t device,
                                const std::string& what) {
  if (!spec.partial_axes.empty()) {
    return Unimplemented(
        "{}: its layout {} is a pending sum over mesh axis {}, which no checkpoint tile holds; "
        "save a plan whose carried values are whole sums",
        what, sharding::ToString(spec), spec.partial_axes.front());
  }
  ALPA_ASSIGN_OR_RETURN(ir::Shape local, spmd::LocalShape(ir::Shape::Array(ir::DType::kF32, dims),
                                                          spec, mesh_shape, what));
  TileRegion region;
  region.extent = local.dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    region.offset.push_back(spmd::IndexOverAxes(mesh_shape, device, spec.dim_axes[d]) *
                            region.extent[d]);
  }
  return region;
}

bool SavesRegion(const sharding::ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                 int64_t device) {
  const std::vector<int64_t> coordinates = spmd::DeviceCoordinates(mesh_shape, device);
  for (int64_t axis : spec.ReplicatedAxes(static_cast<int64_t>(mesh_shape.size()))) {
    if (coordinates[static_cast<size_t>(axis)] != 0) return false;
  }
  return true;
}

TileRegion Intersect(const TileRegion& region, const TileRegion& box) {
  TileRegion meet;
  for (size_t d = 0; d < region.offset.size(); ++d) {
    const int64_t begin = std::max(region.offset[d], box.offset[d]);
    const int64_t end =
        std::min(region.offset[d] + region.extent[d], box.offset[d] + box.extent[d]);
    meet.offset.push_back(begin);
    meet.extent.push_back(std::max<int64_t>(0, end - begin));
  }
  return meet;
}

std::string ToString(const TileRegion& region) {
  std::vector<std::string> ranges;
  for (size_t d = 0; d < region.offset.size(); ++d) {
    ranges.push_back(fmt::format("{}:{}", region.offset[d], region.offset[d] + region.extent[d]));
  }
  return fmt::format("[{}]", fmt::join(ranges, ", "));
}

}  // namespace alpa::checkpoint
