#include "sharding/sharding_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

namespace alpa::sharding {

ShardingSpec ShardingSpec::Replicated(int64_t rank) {
  ALPA_CHECK(rank >= 0, "negative rank {}", rank);
  ShardingSpec spec;
  spec.dim_axes.resize(static_cast<size_t>(rank));
  return spec;
}

ShardingSpec ShardingSpec::SplitDim(int64_t rank, int64_t dim, std::vector<int64_t> axes) {
  ALPA_CHECK(dim >= 0 && dim < rank, "dimension {} out of range for rank {}", dim, rank);
  ShardingSpec spec = Replicated(rank);
  spec.dim_axes[static_cast<size_t>(dim)] = std::move(axes);
  return spec;
}

bool ShardingSpec::IsFullyReplicated() const {
  return partial_axes.empty() &&
         std::all_of(dim_axes.begin(), dim_axes.end(), [](const auto& a) { return a.empty(); });
}

int64_t ShardingSpec::DimOfAxis(int64_t axis) const {
  for (size_t d = 0; d < dim_axes.size(); ++d) {
    if (std::find(dim_axes[d].begin(), dim_axes[d].end(), axis) != dim_axes[d].end()) {
      return static_cast<int64_t>(d);
    }
  }
  return -1;
}

bool ShardingSpec::IsPartialOver(int64_t axis) const {
  return std::find(partial_axes.begin(), partial_axes.end(), axis) != partial_axes.end();
}

std::vector<int64_t> ShardingSpec::ReplicatedAxes(int64_t mesh_rank) const {
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < mesh_rank; ++a) {
    if (DimOfAxis(a) < 0 && !IsPartialOver(a)) axes.push_back(a);
  }
  return axes;
}

Status CheckSpec(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                 const std::vector<int64_t>& tensor_dims) {
  const auto mesh_rank = static_cast<int64_t>(mesh_shape.size());
  if (spec.rank() != static_cast<int64_t>(tensor_dims.size())) {
    return InvalidArgument("sharding {} has {} dimension(s), the tensor has {}", ToString(spec),
                           spec.rank(), tensor_dims.size());
  }
  std::vector<bool> used(mesh_shape.size(), false);
  auto use = [&](int64_t axis, std::string_view where) -> Status {
    if (axis < 0 || axis >= mesh_rank) {
      return InvalidArgument("sharding {}: {} uses mesh axis {}, the mesh [{}] has {} axes",
                             ToString(spec), where, axis, fmt::join(mesh_shape, ","), mesh_rank);
    }
    if (used[static_cast<size_t>(axis)]) {
      return InvalidArgument("sharding {}: mesh axis {} is used twice", ToString(spec), axis);
    }
    used[static_cast<size_t>(axis)] = true;
    return Status::Ok();
  };
  for (int64_t d = 0; d < spec.rank(); ++d) {
    for (int64_t axis : spec.dim_axes[static_cast<size_t>(d)]) {
      ALPA_RETURN_IF_ERROR(use(axis, fmt::format("dimension {}", d)));
    }
    const int64_t tiles = TileCount(spec, mesh_shape, d);
    if (tiles > 1 && tiles > tensor_dims[static_cast<size_t>(d)]) {
      return InvalidArgument("sharding {}: dimension {} of size {} cannot be cut into {} tiles",
                             ToString(spec), d, tensor_dims[static_cast<size_t>(d)], tiles);
    }
  }
  for (size_t i = 0; i < spec.partial_axes.size(); ++i) {
    ALPA_RETURN_IF_ERROR(use(spec.partial_axes[i], "the partial axes"));
    if (i > 0 && spec.partial_axes[i] < spec.partial_axes[i - 1]) {
      return InvalidArgument("sharding {}: partial axes must be ascending", ToString(spec));
    }
  }
  return Status::Ok();
}

int64_t TileCount(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape, int64_t dim) {
  int64_t tiles = 1;
  for (int64_t axis : spec.dim_axes[static_cast<size_t>(dim)]) {
    tiles *= mesh_shape[static_cast<size_t>(axis)];
  }
  return tiles;
}

std::vector<int64_t> ShardDims(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                               const std::vector<int64_t>& tensor_dims) {
  ALPA_CHECK(spec.rank() == static_cast<int64_t>(tensor_dims.size()),
             "sharding of rank {} for a tensor of rank {}", spec.rank(), tensor_dims.size());
  std::vector<int64_t> dims(tensor_dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t tiles = TileCount(spec, mesh_shape, static_cast<int64_t>(d));
    dims[d] = (tensor_dims[d] + tiles - 1) / tiles;  // ceil(n / tiles)
  }
  return dims;
}

namespace {
std::string AxesString(const std::vector<int64_t>& axes) {
  std::string out;
  for (int64_t axis : axes) {
    out += axis < 10 ? fmt::format("{}", axis) : fmt::format("({})", axis);
  }
  return out;
}
}  // namespace

std::string ToString(const ShardingSpec& spec) {
  std::string out = "[";
  for (size_t d = 0; d < spec.dim_axes.size(); ++d) {
    if (d > 0) out += ",";
    out += spec.dim_axes[d].empty() ? "R" : "S" + AxesString(spec.dim_axes[d]);
  }
  out += "]";
  if (!spec.partial_axes.empty()) out += " P" + AxesString(spec.partial_axes);
  return out;
}

}  // namespace alpa::sharding
