// ToHloSharding and FromHloSharding (declared in hlo_sharding.h): a ShardingSpec on a logical
// mesh as an XLA tile assignment, and back.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "sharding/hlo_sharding.h"

namespace alpa::sharding {
namespace {

int64_t Product(const std::vector<int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{1}, std::multiplies<>());
}

// Row-major strides: strides[k] = prod_{j > k} dims[j].
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  return strides;
}

// "0,2,4,6,1,3,5,7" or, past eight, "0,2,4,6,1,3,5,7,...".
std::string DevicesPreview(const std::vector<int64_t>& devices) {
  const size_t shown = std::min<size_t>(devices.size(), 8);
  return fmt::format("{}{}", fmt::join(devices.begin(), devices.begin() + shown, ","),
                     shown < devices.size() ? ",..." : "");
}

}  // namespace

HloSharding ToHloSharding(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape) {
  const auto mesh_rank = static_cast<int64_t>(mesh_shape.size());
  std::vector<bool> used(mesh_shape.size(), false);
  std::vector<int64_t> order;  // the mesh axes in tile-grid order
  auto take = [&](int64_t axis) {
    ALPA_CHECK(axis >= 0 && axis < mesh_rank && !used[static_cast<size_t>(axis)],
               "{}: mesh axis {} out of range or used twice", ToString(spec), axis);
    used[static_cast<size_t>(axis)] = true;
    order.push_back(axis);
    return mesh_shape[static_cast<size_t>(axis)];
  };
  std::vector<int64_t> tile_dims;
  for (const std::vector<int64_t>& axes : spec.dim_axes) {
    int64_t tiles = 1;
    for (int64_t axis : axes) tiles *= take(axis);
    tile_dims.push_back(tiles);
  }
  const bool split = Product(tile_dims) > 1;
  std::vector<SubgroupType> subgroups;
  auto subgroup = [&](const std::vector<int64_t>& axes, SubgroupType type) {
    int64_t size = 1;
    for (int64_t axis : axes) size *= take(axis);
    if (size == 1) return;
    tile_dims.push_back(size);
    subgroups.push_back(type);
  };
  subgroup(spec.partial_axes, SubgroupType::kUnreduced);
  subgroup(spec.ReplicatedAxes(mesh_rank), SubgroupType::kReplicated);
  if (!split && (subgroups.empty() || subgroups.front() == SubgroupType::kReplicated)) {
    return HloSharding::Replicated();
  }
  return HloSharding::Tiled(std::move(tile_dims), TransposedIota(mesh_shape, order),
                            std::move(subgroups));
}

// Each tile dimension k steps through the devices as a mixed-radix count over its mesh axes,
// innermost first: after `inner` tiles (the product of the axes found so far) the device id
// has moved by the row-major stride of the next axis, so that axis is the unused one of size > 1
// with that stride. Device ids and strides are those of arange(n).reshape(mesh_shape). The axes
// found, with the mesh transposed into their order, must then give back the whole array.
Result<ShardingSpec> FromHloSharding(const HloSharding& sharding,
                                     const std::vector<int64_t>& mesh_shape, int64_t tensor_rank) {
  const std::string mesh = fmt::format("[{}]", fmt::join(mesh_shape, ","));
  switch (sharding.kind) {
    case HloSharding::Kind::kReplicated:
      return ShardingSpec::Replicated(tensor_rank);
    case HloSharding::Kind::kManual:
      return InvalidArgument("{{manual}}: the program is already per device; no spec on mesh {}",
                             mesh);
    case HloSharding::Kind::kMaximal:
      return InvalidArgument("{}: the tensor is on one device, not sharded on mesh {}",
                             ToString(sharding), mesh);
    case HloSharding::Kind::kTuple:
      return InvalidArgument("a tuple sharding has no one spec; convert each element");
    case HloSharding::Kind::kTiled:
      break;
  }
  const std::vector<int64_t>& devices = sharding.devices;
  const std::vector<int64_t>& tile_dims = sharding.tile_dims;
  if (static_cast<int64_t>(devices.size()) != Product(mesh_shape)) {
    return InvalidArgument("{}: {} devices, the mesh {} has {}", ToString(sharding), devices.size(),
                           mesh, Product(mesh_shape));
  }
  if (sharding.TensorRank() != tensor_rank) {
    return InvalidArgument("{}: tiles {} dimensions, the tensor has {}", ToString(sharding),
                           sharding.TensorRank(), tensor_rank);
  }
  if (std::count(sharding.subgroups.begin(), sharding.subgroups.end(), SubgroupType::kManual)) {
    return InvalidArgument("{}: manual subgroups have no spec on mesh {}", ToString(sharding),
                           mesh);
  }
  auto not_a_split = [&](const std::string& why) -> Status {
    return InvalidArgument("tile assignment [{}] devices {} is not a split of mesh {} axes: {}",
                           fmt::join(tile_dims, ","), DevicesPreview(devices), mesh, why);
  };
  if (devices[0] != 0)
    return not_a_split(fmt::format("the first tile is on device {}", devices[0]));

  const std::vector<int64_t> mesh_strides = RowMajorStrides(mesh_shape);
  const std::vector<int64_t> tile_strides = RowMajorStrides(tile_dims);
  std::vector<bool> used(mesh_shape.size(), false);
  std::vector<std::vector<int64_t>> axes_of(tile_dims.size());  // major first
  for (size_t k = 0; k < tile_dims.size(); ++k) {
    for (int64_t inner = 1; inner < tile_dims[k];) {
      const int64_t step = devices[static_cast<size_t>(inner * tile_strides[k])];
      size_t axis = 0;
      while (axis < mesh_shape.size() &&
             (used[axis] || mesh_shape[axis] == 1 || mesh_strides[axis] != step)) {
        ++axis;
      }
      if (axis == mesh_shape.size()) {
        return not_a_split(fmt::format(
            "tile dimension {} moves {} devices after {} tile(s), the stride of no unused axis", k,
            step, inner));
      }
      inner *= mesh_shape[axis];
      if (tile_dims[k] % inner != 0) {
        return not_a_split(fmt::format("tile dimension {} of size {} cuts mesh axis {} of size {}",
                                       k, tile_dims[k], axis, mesh_shape[axis]));
      }
      used[axis] = true;
      axes_of[k].insert(axes_of[k].begin(), static_cast<int64_t>(axis));
    }
  }
  // The axes not found have size 1 (the found ones multiply to the device count).
  std::vector<int64_t> order;
  for (const std::vector<int64_t>& axes : axes_of)
    order.insert(order.end(), axes.begin(), axes.end());
  for (size_t axis = 0; axis < mesh_shape.size(); ++axis) {
    if (!used[axis]) order.push_back(static_cast<int64_t>(axis));
  }
  if (TransposedIota(mesh_shape, order) != devices) {
    return not_a_split("the devices of a tile dimension are not a count over its mesh axes");
  }
  ShardingSpec spec = ShardingSpec::Replicated(tensor_rank);
  for (size_t k = 0; k < tile_dims.size(); ++k) {
    if (static_cast<int64_t>(k) < tensor_rank) {
      spec.dim_axes[k] = axes_of[k];
    } else if (sharding.subgroups[k - static_cast<size_t>(tensor_rank)] ==
               SubgroupType::kUnreduced) {
      spec.partial_axes.insert(spec.partial_axes.end(), axes_of[k].begin(), axes_of[k].end());
    }
  }
  std::sort(spec.partial_axes.begin(), spec.partial_axes.end());
  return spec;
}

std::string ToHloShardingText(const std::vector<ShardingSpec>& leaf_specs,
                              const std::vector<int64_t>& mesh_shape) {
  if (leaf_specs.size() == 1) return ToString(ToHloSharding(leaf_specs[0], mesh_shape));
  std::vector<std::string> parts;
  for (const ShardingSpec& spec : leaf_specs) {
    parts.push_back(ToString(ToHloSharding(spec, mesh_shape)));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

}  // namespace alpa::sharding
