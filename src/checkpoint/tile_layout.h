// Where a device's tile of a value lies in the whole array, and which device saves it.
//
// Under a sharding spec on a mesh (sharding/sharding_spec.h), dimension i of a value of n_i
// elements split over axes A_i is cut into T_i = prod_{a in A_i} M[a] tiles; device d holds
//   [IndexOverAxes(d, A_i) * n_i / T_i, + n_i / T_i)
// along it. Devices that differ only along replicating axes hold the same region: of those, the
// one at coordinate 0 along every replicating axis saves it, so a checkpoint holds each region
// once and its tiles partition the array.
#ifndef ALPA_CHECKPOINT_TILE_LAYOUT_H_
#define ALPA_CHECKPOINT_TILE_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::checkpoint {

// A box of a whole array: `offset` and `extent` per dimension, in elements.
struct TileRegion {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;

  int64_t ElementCount() const;
  friend bool operator==(const TileRegion&, const TileRegion&) = default;
};

// The region device `device` of the mesh holds of an array of `dims` under `spec`. Errors: a
// spec that does not fit (CheckSpec), a dimension its tiles do not divide, or a value partial
// over some axis (a pending sum is no tile of the value); `what` names the value.
Result<TileRegion> DeviceRegion(const std::vector<int64_t>& dims,
                                const sharding::ShardingSpec& spec,
                                const std::vector<int64_t>& mesh_shape, int64_t device,
                                const std::string& what);

// Whether `device` saves its region: it sits at coordinate 0 along every axis that replicates.
bool SavesRegion(const sharding::ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                 int64_t device);

// The part of `region` inside `box` (extents 0 where they do not meet).
TileRegion Intersect(const TileRegion& region, const TileRegion& box);

// "[0:4, 8:16]"
std::string ToString(const TileRegion& region);

}  // namespace alpa::checkpoint

#endif  // ALPA_CHECKPOINT_TILE_LAYOUT_H_
